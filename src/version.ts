/** The product's version (vidq --version, the MCP server's name and version). */
export const VERSION = '0.1.0';
