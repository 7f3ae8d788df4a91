import { on } from "../composer.js";

/**
 * A Stop that came to its own turn found no call of its turn running (the call ended
 * first, or it stopped an older progress): nothing more happens, and nothing is said.
 */
export const stopped = on("stop", () => []);
