// Files imported with { type: 'file' }: Bun hands back their path (embedded when compiled).
declare module 'swagger-ui-dist/swagger-ui-bundle.js' {
  const path: string;
  export default path;
}
declare module '*.css' {
  const path: string;
  export default path;
}
