/**
 * One finding of `roomgate doctor`: what was looked at and what was found, and for a
 * problem the fix. A problem is something `roomgate start` would fail on or a room
 * would notice; a note is worth knowing and changes nothing.
 */
export interface Diagnosis {
  level: "ok" | "note" | "problem";
  /** One line: the subject first (`namespace feed`, `telegram bot @feed_bot`), then what was found. */
  text: string;
  /** For a problem: what to do about it. */
  fix?: string;
}

/** A finding that holds. */
export const ok = (text: string): Diagnosis => ({ level: "ok", text });
/** A finding worth knowing that needs nothing done. */
export const note = (text: string): Diagnosis => ({ level: "note", text });
/** Something start would fail on, with its fix. */
export const problem = (text: string, fix: string): Diagnosis => ({ level: "problem", text, fix });

/**
 * Why a network request failed, in an operator's words, from the error's `code`
 * (the cause of a fetch failure carries it): a name that does not resolve, nothing
 * listening, a timeout, a certificate. Undefined when the code says nothing known.
 */
export function networkReason(err: unknown, host?: string): string | undefined {
  let e: unknown = err;
  for (let depth = 0; depth < 4 && e !== null && typeof e === "object"; depth++) {
    const code = (e as { code?: unknown }).code;
    const named = (e as { hostname?: unknown }).hostname;
    host = typeof named === "string" ? named : (host ?? "the server");
    if (code === "ENOTFOUND" || code === "EAI_AGAIN") return `the name ${host} was not found (DNS: ${code})`;
    if (code === "ECONNREFUSED") return `nothing accepts connections at ${host} (ECONNREFUSED)`;
    if (code === "ETIMEDOUT" || code === "UND_ERR_CONNECT_TIMEOUT" || (e as Error).name === "TimeoutError")
      return `${host} did not answer in time`;
    if (typeof code === "string" && /CERT|SSL|TLS/.test(code))
      return `${host}'s TLS certificate was refused (${code})`;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}
