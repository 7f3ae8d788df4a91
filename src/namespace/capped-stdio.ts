import type { ChildProcess } from "node:child_process";
import { deserializeMessage, type JSONRPCMessage } from "@modelcontextprotocol/client";
import { StdioClientTransport, type StdioServerParameters } from "@modelcontextprotocol/client/stdio";
import { replyTooLarge, requestIds, sniffId } from "./reply-cap.js";

/** How much of an oversized line is kept to find its id. */
const HEAD_BYTES = 256;

/**
 * Splits a child's stdout into JSON-RPC lines, none read past `maxBytes`: a line over
 * the cap is dropped as it arrives (memory stays at the cap), the request it answers
 * gets an error reply at once, and reading goes on at the next line, so one hostile
 * reply fails one call and the server keeps running.
 */
export class CappedReadBuffer {
  private parts: Buffer[] = [];
  private size = 0;
  private skipping = false;
  private readonly ready: (string | JSONRPCMessage)[] = [];
  /** Requests sent and not answered yet: the calls an oversized line may belong to. */
  private readonly waiting = new Set<string | number>();

  constructor(private readonly maxBytes: number) {}

  /** Notes the requests in an outgoing message. */
  sent(message: JSONRPCMessage): void {
    for (const id of requestIds(message)) this.waiting.add(id);
  }

  append(chunk: Buffer): void {
    let start = 0;
    for (let nl = chunk.indexOf(0x0a); nl !== -1; nl = chunk.indexOf(0x0a, start)) {
      if (this.skipping) this.skipping = false;
      else if (this.size + nl - start > this.maxBytes) this.overflow(chunk.subarray(start, nl));
      else {
        this.parts.push(chunk.subarray(start, nl));
        this.ready.push(Buffer.concat(this.parts).toString("utf8").replace(/\r$/, ""));
      }
      this.parts = [];
      this.size = 0;
      start = nl + 1;
    }
    if (this.skipping || start >= chunk.length) return;
    const rest = chunk.subarray(start);
    this.parts.push(rest);
    this.size += rest.byteLength;
    if (this.size > this.maxBytes) {
      this.overflow(rest);
      this.skipping = true;
    }
  }

  /** The next message; throws for a line that is not JSON-RPC, as the SDK's own buffer does. */
  readMessage(): JSONRPCMessage | null {
    const next = this.ready.shift();
    if (next === undefined) return null;
    const message = typeof next === "string" ? deserializeMessage(next) : next;
    if ("id" in message && !("method" in message) && message.id !== undefined)
      this.waiting.delete(message.id);
    return message;
  }

  clear(): void {
    this.parts = [];
    this.size = 0;
    this.skipping = false;
    this.ready.length = 0;
    this.waiting.clear();
  }

  private overflow(last: Buffer): void {
    const head = Buffer.concat([...this.parts, last])
      .subarray(0, HEAD_BYTES)
      .toString("utf8");
    this.parts = [];
    this.size = 0;
    const waiting = [...this.waiting];
    const id = sniffId(head);
    // An id that is not ours (or none found) cannot say which call it was: all waiting ones fail.
    const ids = id !== undefined && waiting.includes(id) ? [id] : waiting;
    for (const each of ids) this.ready.push(replyTooLarge(each, this.maxBytes));
  }
}

/**
 * The SDK's stdio transport with its line buffer replaced by a CappedReadBuffer
 * (`maxBufferSize` alone would close the connection and kill the child). Being a
 * subclass, it is probed for its MCP revision in place, on the connection's own
 * child: no second process per start (the SDK spawns one for its own class), and a
 * server that exits on the probe is started again as a 2025-11-25 one
 * (namespace-connection.ts).
 */
export class CappedStdioTransport extends StdioClientTransport {
  private readonly buffer: CappedReadBuffer;
  private child: ChildProcess | undefined;

  constructor(params: StdioServerParameters, maxBytes: number) {
    super(params);
    this.buffer = new CappedReadBuffer(maxBytes);
    // The SDK reads stdout through this field (pinned SDK version; test/namespace covers it).
    (this as unknown as { _readBuffer: CappedReadBuffer })._readBuffer = this.buffer;
  }

  override async start(): Promise<void> {
    await super.start();
    // Kept here too: the SDK lets go of its child as soon as it starts closing it (see `stop`).
    this.child = (this as unknown as { _process?: ChildProcess })._process;
  }

  override async send(message: JSONRPCMessage): Promise<void> {
    this.buffer.sent(message);
    await super.send(message);
  }

  /**
   * Ends the child at once, after a start that failed. The SDK's close only closes the
   * child's stdin and signals it later, on timers that do not keep a process alive: a
   * child that no longer reads its stdin (a server that refused the revision asked for)
   * would outlive a short run such as `roomgate check`.
   */
  stop(): void {
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
  }
}
