// The page's HTML, imported `with { type: 'file' }` (src/http/routes/ui.ts): Bun hands back its path.
declare module '*.html' {
  const path: string;
  export default path;
}
