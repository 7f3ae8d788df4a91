import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface, type Interface } from "node:readline";
import type { PlatformSender, Receiver } from "../core/adapter.js";
import type { InboundEvent } from "../core/event.js";
import type { ProgressUpdate } from "../core/progress.js";
import type { TurnOutcome } from "../core/reply.js";
import { bindingFinder } from "../access/bindings.js";
import { shellRecheck } from "../access/recheck.js";
import { shellRoom } from "../core/room.js";
import { edgeTexts } from "../edge/edge-texts.js";
import { pairingCodeIn, type PairingGate } from "../access/pairing-gate.js";
import { renderPlain } from "../render/plain.js";
import type { PlatformFactory, RuntimeDeps } from "../runtime.js";
import { laneOf } from "../scheduler/lanes.js";
import { saveAttachments } from "./shell-media.js";
import { writeProgress } from "./shell-progress.js";
import { CLEAR_LINE, startStatusLine } from "./status-line.js";
import { visibleControls } from "./visible-controls.js";

/** Options of a terminal room. */
export interface ShellOptions {
  /** Room name; the same name continues the same conversation across runs. */
  name: string;
  namespace: string;
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
  /** Interactive (prompt, keep reading) or scripted (one message per line, exit at end of input). */
  interactive: boolean;
  user?: string;
  /** Where files a reply carries (images, documents) are saved; default: a folder in the OS temp dir. */
  filesDir?: string;
}

/**
 * A terminal room (the Hubot shell adapter): each input line is a message in the
 * room `shell:<name>`, queued like any platform's; replies are printed as plain text.
 */
export class ShellRoom implements Receiver, PlatformSender {
  readonly platform = "shell" as const;
  readonly room: string;
  private readonly run = randomBytes(4).toString("hex");
  private count = 0;
  private readonly pending = new Set<string>();
  /** The latest progress of each running turn, shown on its status line (TTY only). */
  private readonly progressText = new Map<string, string>();
  private readline: Interface | undefined;
  private ended!: () => void;
  /** Resolves when input has ended and every message read has been answered. */
  readonly finished: Promise<void>;
  private inputDone = false;
  /** Enqueues one line after another, so the room's FIFO has them in typed order. */
  private queued: Promise<unknown> = Promise.resolve();
  /** Lines that could not be queued; the shell exits non-zero when there were any. */
  failed = 0;

  private readonly sender: string;
  private readonly allowed: (event: InboundEvent) => boolean;

  constructor(
    private readonly options: ShellOptions,
    private readonly deps: Pick<RuntimeDeps, "inbox" | "log"> &
      Partial<Pick<RuntimeDeps, "config" | "paired" | "pairing">>,
  ) {
    this.room = shellRoom(options.name);
    this.sender = `shell:${options.user ?? process.env.USER ?? "local"}`;
    this.allowed = shellCheck(deps);
    this.finished = new Promise((resolve) => (this.ended = resolve));
  }

  /** The folder this room saves reply attachments in. */
  get filesDir(): string {
    return (
      this.options.filesDir ?? join(tmpdir(), "roomgate-files", this.options.name.replace(/[^\w.-]+/g, "_"))
    );
  }

  /** The queue lane of this room: only this process can print to this terminal. */
  get lane(): string {
    return laneOf(this.room);
  }

  async start(): Promise<void> {
    const { input, output, interactive } = this.options;
    this.readline = createInterface({
      input,
      output: interactive ? output : undefined,
      terminal: interactive,
    });
    if (interactive) {
      output.write(
        `roomgate shell — room ${this.room}, agent "${this.options.namespace}". /help for commands, Ctrl-D to leave.\n`,
      );
      this.readline.setPrompt(`${this.options.namespace}> `);
      this.readline.prompt();
    }
    this.readline.on("line", (line) => this.submit(line));
    this.readline.on("close", () => {
      this.inputDone = true;
      this.checkFinished();
    });
  }

  async stop(): Promise<void> {
    this.readline?.close();
  }

  private submit(line: string): void {
    if (line.trim() === "") {
      if (this.options.interactive) this.readline?.prompt();
      return;
    }
    const code = pairingCodeIn(line);
    const pairing = this.deps.pairing;
    if (code !== undefined && pairing) {
      this.answerAtEdge(() => this.pair(pairing, code));
      return;
    }
    this.count += 1;
    const event: InboundEvent = {
      kind: "message",
      text: line,
      eventId: `shell:${this.options.name}:${this.run}:${this.count}`,
      room: this.room,
      namespace: this.options.namespace,
      platform: "shell",
      sender: { id: this.sender, allowed: true },
      // A terminal room is one person at their own keyboard: every line is for the bot.
      addressed: "direct",
      receivedAt: Date.now(),
      origin: { platform: "shell" },
    };
    this.pending.add(event.eventId);
    this.queued = this.queued.then(async () => {
      // A terminal room bound in `shell.rooms` is for its users (listed or paired) only;
      // decided in typed order, so a `/pair` just before counts.
      if (!this.allowed(event)) {
        this.options.output.write(`${edgeTexts.refusal}\n\n`);
        this.pending.delete(event.eventId);
        this.checkFinished();
        return;
      }
      await within(QUEUE_TIMEOUT_MS, this.deps.inbox.enqueue(event)).catch((err: unknown) => {
        this.failed += 1;
        this.deps.log.error({ err }, "shell input could not be queued");
        this.options.output.write(`${shellTexts.notQueued(line, err)}\n`);
        this.pending.delete(event.eventId);
        this.checkFinished();
      });
    });
  }

  /** `/pair <code>` in a terminal room: the person at the terminal joins the room's binding. */
  private async pair(pairing: PairingGate, code: string): Promise<string | undefined> {
    const binding = this.deps.config
      ? bindingFinder(this.deps.config)({ room: this.room, origin: { platform: "shell" } })
      : undefined;
    return pairing.redeem(
      { senderId: this.sender, room: this.room, accepts: (name) => name === binding?.name },
      code,
    );
  }

  /** A line from the edge, in typed order after what is queued, counted until printed. */
  private answerAtEdge(line: () => Promise<string | undefined>): void {
    const id = `edge:${++this.count}`;
    this.pending.add(id);
    this.queued = this.queued
      .then(line)
      .then((text) => {
        if (text) this.abovePrompt(() => this.options.output.write(`${text}\n\n`));
        else if (this.options.interactive && !this.inputDone) this.readline?.prompt();
      })
      .catch((err: unknown) => this.deps.log.error({ err }, "a terminal edge answer failed"))
      .finally(() => {
        this.pending.delete(id);
        this.checkFinished();
      });
  }

  async deliver(event: InboundEvent, outcome: TurnOutcome): Promise<string[]> {
    const { output } = this.options;
    const refs: string[] = [];
    this.abovePrompt(() => {
      // Namespace text is never interpreted by the terminal: control characters are shown as escapes.
      if (outcome.chosen) output.write(`→ ${visibleControls(outcome.chosen.label)}\n`);
      if (outcome.reply) {
        for (const [i, part] of renderPlain(outcome.reply).entries()) {
          output.write(`${visibleControls(part)}\n\n`);
          refs.push(`${event.eventId}:${i}`);
        }
        for (const line of saveAttachments(this.filesDir, event.eventId, outcome.reply.attachments ?? [])) {
          output.write(`${line}\n\n`);
        }
      } else if (outcome.toast) {
        output.write(`${visibleControls(outcome.toast)}\n\n`);
      }
    });
    this.pending.delete(event.eventId);
    this.checkFinished();
    return refs;
  }

  /**
   * Writes above the prompt: on a terminal the prompt line (and what is typed on it so
   * far) is cleared first and drawn again after, so a post nobody asked for (a schedule,
   * a webhook) never lands in the middle of the line being typed.
   */
  private abovePrompt(write: () => void): void {
    const prompting = this.options.interactive && !this.inputDone;
    if (prompting && (this.options.output as { isTTY?: boolean }).isTTY)
      this.options.output.write(CLEAR_LINE);
    write();
    if (prompting) this.readline?.prompt(true);
  }

  /**
   * A spinner on the terminal while the turn runs, carrying the running call's latest
   * progress on the same line (only on a TTY, so piped output stays clean).
   */
  working(event: InboundEvent): () => void {
    const stop = startStatusLine(this.terminal(), `asking "${this.options.namespace}"…`, 100, () =>
      this.progressText.get(event.eventId),
    );
    return () => {
      stop();
      this.progressText.delete(event.eventId);
    };
  }

  async progress(event: InboundEvent, update: ProgressUpdate): Promise<void> {
    if (this.terminal().isTTY === true) this.progressText.set(event.eventId, visibleControls(update.text));
    else writeProgress(this.options.output, { ...update, text: visibleControls(update.text) });
  }

  private terminal(): NodeJS.WritableStream & { isTTY?: boolean } {
    return this.options.output as NodeJS.WritableStream & { isTTY?: boolean };
  }

  private checkFinished(): void {
    if (this.inputDone && this.pending.size === 0) this.ended();
  }
}

/** Who may use this terminal room: the access module's rule, with the users pairing added. */
function shellCheck(deps: Partial<Pick<RuntimeDeps, "config" | "paired">>): (event: InboundEvent) => boolean {
  const paired = deps.paired;
  return shellRecheck(deps.config, paired && ((binding, sender) => paired.has(binding, sender)));
}

/** How long a line may wait to be queued (Redis unreachable, a failover) before it is given up. */
const QUEUE_TIMEOUT_MS = 10_000;

/** Rejects when `work` takes longer than `ms`. */
function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new QueueTimeoutError(ms)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** Redis did not take a line in time. */
class QueueTimeoutError extends Error {
  constructor(readonly ms: number) {
    super(`Redis did not answer within ${ms / 1000} s`);
  }
}

/** What the terminal says when a line was not queued (never raw error dumps). */
const shellTexts = {
  notQueued: (line: string, err: unknown): string => {
    const why = err instanceof Error ? err.message.split("\n")[0]!.slice(0, 200) : "unknown error";
    const shown = line.length > 40 ? `${line.slice(0, 40)}…` : line;
    return `roomgate: "${visibleControls(shown)}" was not queued (${visibleControls(why)}); nothing was sent for it.`;
  },
};

/** The platform factory of one terminal room. */
export function shellPlatform(options: ShellOptions, onRoom: (room: ShellRoom) => void): PlatformFactory {
  return (deps) => {
    const room = new ShellRoom(options, deps);
    onRoom(room);
    return { sender: room, receiver: room, lanes: [room.lane], senderCheck: shellCheck(deps) };
  };
}
