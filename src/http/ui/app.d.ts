// Imported `with { type: 'file' }` by src/http/routes/ui.ts: Bun hands back the file's path
// (embedded in the compiled executable). The file itself is the page's browser script.
declare const path: string;
export default path;
