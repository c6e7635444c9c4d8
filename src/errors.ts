/**
 * Errors that reach a client. Each carries its HTTP status; the HTTP layer maps them once to the
 * spec's body `{error: <status>, message}`. Messages name the field or the cause, never a secret.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export const badRequest = (message: string) => new ApiError(400, message);
export const unauthorized = (message = 'a valid token is required (field "token")') => new ApiError(401, message);
export const forbidden = (message: string) => new ApiError(403, message);
export const notFound = (message: string) => new ApiError(404, message);
export const conflict = (message: string) => new ApiError(409, message);
export const gone = (message: string) => new ApiError(410, message);
export const payloadTooLarge = (message: string) => new ApiError(413, message);
export const unsupportedMedia = (message: string) => new ApiError(415, message);
export const unprocessable = (message: string) => new ApiError(422, message);
export const tooManyRequests = (message: string) => new ApiError(429, message);
export const badGateway = (message: string) => new ApiError(502, message);
export const insufficientStorage = (message: string) => new ApiError(507, message);

/** The body every error response carries (spec: Error). */
export interface ErrorBody {
  error: number;
  message: string;
}

export function errorBody(status: number, message: string): ErrorBody {
  return { error: status, message };
}
