/** Options of the HTTP application that are not configuration: facts about how it is served. */
export interface HttpOptions {
  /** The server is bound to a loopback address (enables anonymous GET /indexes when configured). */
  loopback: boolean;
}
