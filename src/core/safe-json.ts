/** JSON.parse that yields undefined instead of throwing, for values read from Redis (then parsed with their schema). */
export function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
