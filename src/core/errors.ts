/**
 * Base of roomgate's errors: `message` is for the log, `userText` is the one line a
 * person may see (hookshot's CommandError split), `cause` is kept.
 */
export class RoomgateError extends Error {
  readonly userText: string;
  constructor(message: string, options: { cause?: unknown; userText?: string } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.userText = options.userText ?? message;
  }
}

/** The configuration file or environment is wrong; `issues` lists every bad field with its path. */
export class ConfigError extends RoomgateError {
  readonly issues: readonly { path: string; message: string }[];
  constructor(
    message: string,
    options: {
      cause?: unknown;
      userText?: string;
      issues?: readonly { path: string; message: string }[];
    } = {},
  ) {
    super(message, options);
    this.issues = options.issues ?? [];
  }
}

/** A namespace server failed, timed out or could not be reached. */
export class NamespaceError extends RoomgateError {
  constructor(
    readonly namespace: string,
    message: string,
    options: { cause?: unknown; userText?: string } = {},
  ) {
    super(message, options);
  }
}

/**
 * A namespace failure the turn must not answer with its line: the scheduler decides
 * (the namespace is restarting: the room waits for it; the message crashed it twice:
 * it is set aside). The engine lets these through instead of turning them into a line.
 */
export function interruptsTurn(err: unknown): boolean {
  return err instanceof NamespaceError && (err as { interruptsTurn?: unknown }).interruptsTurn === true;
}

/** A namespace returned a result that does not validate as an Answer. */
export class MalformedAnswerError extends NamespaceError {
  constructor(
    namespace: string,
    readonly tool: string,
    readonly ref: string,
    cause: unknown,
  ) {
    super(namespace, `${tool} returned a result that is not a valid Answer (ref ${ref})`, {
      cause,
      userText: `The "${namespace}" agent sent a malformed reply, so it is not shown (ref ${ref}).`,
    });
  }
}

/** `redis-server` is needed for the embedded default and is not installed. */
export class RedisMissingError extends RoomgateError {}

/** The embedded Redis data folder is in use by another running roomgate process. */
export class RedisDirBusyError extends RoomgateError {}

/** A file the person sent could not be fetched for a tool (too large, too slow, gone); `userText` says which. */
export class FileFetchError extends RoomgateError {}
/** The configured Redis did not answer (down, wrong address or password). */
export class RedisUnreachableError extends RoomgateError {}
