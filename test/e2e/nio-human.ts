import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

/** One timeline event as the human's client sees it (nio_human.py `event_json`). */
export interface HumanEvent {
  event_id: string;
  sender: string;
  type: string;
  content: Record<string, unknown>;
  /** It came encrypted and this client decrypted it. */
  decrypted: boolean;
  /** It came encrypted and this client cannot decrypt it. */
  undecryptable: boolean;
  session_id: string | null;
  /** Decrypted with a room key from a device this client has verified. */
  verified: boolean;
  /** `m.relates_to` of the decrypted content, or of the clear part when only there. */
  relates_to?: {
    rel_type?: string;
    event_id?: string;
    key?: string;
    "m.in_reply_to"?: { event_id?: string };
  };
}

/** A device of a user as the human's client knows it. */
export interface HumanDevice {
  device_id: string;
  ed25519: string;
  curve25519: string;
  verified: boolean;
}

type Pending = { resolve: (value: unknown) => void; reject: (err: Error) => void };

/**
 * A person's end-to-end-encrypted Matrix client, independent of roomgate's crypto:
 * Debian's matrix-nio with libolm (test/e2e/human/nio_human.py, run with
 * /usr/bin/python3), driven over stdin/stdout one JSON request per line.
 */
export class NioHuman {
  private next = 0;
  private readonly pending = new Map<number, Pending>();
  private stderr = "";
  userId = "";
  deviceId = "";

  private constructor(private readonly child: ChildProcess) {
    const lines = createInterface({ input: child.stdout! });
    lines.on("line", (line) => {
      const reply = JSON.parse(line) as { id: number; ok: boolean; result?: unknown; error?: string };
      const waiting = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if (!waiting) return;
      if (reply.ok) waiting.resolve(reply.result);
      else waiting.reject(new Error(`nio: ${reply.error}`));
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString()).slice(-20_000);
    });
    child.on("exit", (code) => {
      for (const waiting of this.pending.values())
        waiting.reject(new Error(`nio exited (${code}): ${this.stderr.slice(-2000)}`));
      this.pending.clear();
    });
  }

  /** Starts the client and logs in as a new device of `userId`. */
  static async login(
    homeserver: string,
    userId: string,
    password: string,
    deviceName: string,
  ): Promise<NioHuman> {
    const child = spawn("/usr/bin/python3", ["test/e2e/human/nio_human.py"], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    const human = new NioHuman(child);
    const store = mkdtempSync(join(tmpdir(), "roomgate-nio-"));
    const who = (await human.call("login", {
      homeserver,
      user_id: userId,
      password,
      store,
      device_name: deviceName,
    })) as { device_id: string };
    human.userId = userId;
    human.deviceId = who.device_id;
    return human;
  }

  /**
   * Creates an encrypted private room inviting `invite`; returns its id. With
   * `rotationPeriodMsgs` the room asks senders to rotate their session that often.
   */
  async createEncryptedRoom(
    name: string,
    invite: string[] = [],
    rotationPeriodMsgs?: number,
  ): Promise<string> {
    return (await this.call("create_room", {
      name,
      invite,
      rotation_period_msgs: rotationPeriodMsgs,
    })) as string;
  }

  /** The devices of `userId` as this client knows them, with their keys. */
  async devices(userId: string): Promise<HumanDevice[]> {
    return (await this.call("devices", { user_id: userId })) as HumanDevice[];
  }

  /** Marks a device verified if the server publishes `ed25519` for it (Element's `/verify`); throws otherwise. */
  async verify(userId: string, deviceId: string, ed25519: string): Promise<void> {
    await this.call("verify", { user_id: userId, device_id: deviceId, ed25519 });
  }

  async invite(roomId: string, userId: string): Promise<void> {
    await this.call("invite", { room_id: roomId, user_id: userId });
  }

  async join(roomId: string): Promise<void> {
    await this.call("join", { room_id: roomId });
  }

  /** Sends any event type encrypted; returns its event id. */
  async send(roomId: string, type: string, content: Record<string, unknown>): Promise<string> {
    return (await this.call("send", { room_id: roomId, type, content })) as string;
  }

  /** Sends encrypted text, as a reply when `replyTo` is given. */
  say(roomId: string, body: string, replyTo?: string): Promise<string> {
    return this.send(roomId, "m.room.message", {
      msgtype: "m.text",
      body,
      ...(replyTo ? { "m.relates_to": { "m.in_reply_to": { event_id: replyTo } } } : {}),
    });
  }

  /** Reacts, encrypted, to an event. */
  react(roomId: string, eventId: string, key: string): Promise<string> {
    return this.send(roomId, "m.reaction", {
      "m.relates_to": { rel_type: "m.annotation", event_id: eventId, key },
    });
  }

  /** Uploads a text file encrypted and sends it as an encrypted m.file. */
  async sendFile(roomId: string, name: string, mime: string, text: string): Promise<string> {
    return (await this.call("send_file", { room_id: roomId, name, mime, text })) as string;
  }

  /** Downloads and decrypts a file the bot sent encrypted. */
  async download(file: Record<string, unknown>): Promise<Buffer> {
    const { base64 } = (await this.call("download_encrypted", { file })) as { base64: string };
    return Buffer.from(base64, "base64");
  }

  /** Starts a new Megolm session for the room at the next message. */
  async rotate(roomId: string): Promise<void> {
    await this.call("rotate", { room_id: roomId });
  }

  /** Sends text whose room key is kept from one device until `deliverLateKey`. */
  async sayWithLateKey(roomId: string, body: string, userId: string, deviceId: string): Promise<string> {
    const sent = (await this.call("send_late_key", {
      room_id: roomId,
      user_id: userId,
      device_id: deviceId,
      content: { msgtype: "m.text", body },
    })) as { event_id: string };
    return sent.event_id;
  }

  /** Sends the room key kept back for that message (an `m.room_key` to-device message). */
  async deliverLateKey(eventId: string): Promise<void> {
    await this.call("deliver_late_key", { event_id: eventId });
  }

  /** The room's timeline as this client sees it, decrypted where it can, oldest first. */
  async events(roomId: string): Promise<HumanEvent[]> {
    return (await this.call("messages", { room_id: roomId })) as HumanEvent[];
  }

  /** Polls the timeline until an event matches. */
  async waitFor(roomId: string, match: (e: HumanEvent) => boolean, timeoutMs = 30_000): Promise<HumanEvent> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = (await this.events(roomId)).find(match);
      if (found) return found;
      if (Date.now() > deadline)
        throw new Error(`${this.userId}: no matching event in ${roomId} within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
  }

  /** Logs out of nothing, closes the client and ends the process. */
  async close(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.child.once("exit", resolve));
    await this.call("close", {}).catch(() => undefined);
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))]);
    if (this.child.exitCode === null) this.child.kill("SIGKILL");
  }

  private call(cmd: string, args: Record<string, unknown>): Promise<unknown> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.child.stdin!.write(`${JSON.stringify({ id, cmd, args })}\n`);
    });
  }
}
