// How the public side of WHIP and WHEP refuses: a status and a short text. A leaf, so that any part
// of a session (its router's pipes included) can refuse without importing the session.

/** A refusal of the public side: its HTTP status and a short text (public.ts answers it as text/plain). */
export class WhipRefusal extends Error {
  constructor(
    readonly status: 400 | 401 | 404 | 409 | 412 | 415 | 422 | 428 | 429 | 503,
    message: string,
  ) {
    super(message);
    this.name = 'WhipRefusal';
  }
}
