// The page's state: one object shared by the views, and the router hook they call to redraw.

const TOKEN_KEY = 'vidq.token';

/** An upload started in this tab, followed until its analysis ends. */
export interface Upload {
  id: number;
  url: string | null;
  indexLabel: string;
  indexId: string | null;
  key: string | null;
  fileName: string;
  phase: 'upload' | 'analysis' | 'done';
  stage: string;
  pct: number;
  samples: { t: number; p: number }[];
  error: string | null;
  bytes?: number;
  total?: number;
  eta?: number | null;
  duration?: number;
  duplicate?: boolean;
}

export const S = {
  token: sessionStorage.getItem(TOKEN_KEY),
  showDeleted: false,
  /** Uploads started in this tab (newest first), followed until their analysis ends. */
  uploads: [] as Upload[],
  /** Run when the view changes: stop polls, abort streams. */
  cleanup: [] as (() => void)[],
  /** false once /inquire-stream answered "no such endpoint". */
  streaming: true,
  signOutMessage: null as string | null,
  /** Set by the view that lists indexes or videos: reload them (an upload added or finished one). */
  onIndexesChanged: null as (() => void) | null,
  /** true after the first navigation: the heading of a new view takes the focus. */
  routeChanged: false,
};

let uploadSeq = 0;
export const nextUploadId = () => ++uploadSeq;

// The router lives in app.ts, which imports the views; they reach it through this hook, so that
// no view imports app.ts.
let router: () => void = () => {};
export const setRouter = (f: () => void) => {
  router = f;
};
/** Draws the view the location names. */
export const route = () => router();

export function signIn(token: string) {
  S.token = token;
  sessionStorage.setItem(TOKEN_KEY, token);
  S.signOutMessage = null;
}

export function signOut(message: string) {
  S.token = null;
  sessionStorage.removeItem(TOKEN_KEY);
  S.signOutMessage = message;
  route();
}
