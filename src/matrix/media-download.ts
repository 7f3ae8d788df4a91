import { readCapped } from "../edge/capped-read.js";

/**
 * Downloads an mxc:// URI with the bot's token: the authenticated media endpoint
 * (Matrix 1.11) first, then the legacy one; at most `maxBytes`, counted while
 * streaming (TooLargeError beyond), and aborted by `signal`.
 */
export async function downloadMedia(
  homeserver: string,
  accessToken: string,
  mxc: string,
  maxBytes: number,
  signal: AbortSignal,
): Promise<Uint8Array> {
  const match = /^mxc:\/\/([^/]+)\/([^/?#]+)$/.exec(mxc);
  if (!match) throw new Error("not an mxc:// URI");
  const where = `${encodeURIComponent(match[1]!)}/${encodeURIComponent(match[2]!)}`;
  const root = homeserver.replace(/\/+$/, "");
  const headers = { authorization: `Bearer ${accessToken}` };
  let res = await fetch(`${root}/_matrix/client/v1/media/download/${where}`, { headers, signal });
  if (res.status === 404 || res.status === 400 || res.status === 405) {
    await res.body?.cancel();
    res = await fetch(`${root}/_matrix/media/v3/download/${where}`, { headers, signal });
  }
  if (!res.ok) {
    await res.body?.cancel();
    throw new Error(`media download answered HTTP ${res.status}`);
  }
  return readCapped(res.body, maxBytes);
}
