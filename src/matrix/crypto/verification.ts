import {
  RoomId,
  Sas,
  ToDeviceRequest,
  UserId,
  VerificationMethod,
  VerificationRequestPhase,
  type RoomMessageRequest,
  type VerificationRequest,
} from "@matrix-org/matrix-sdk-crypto-wasm";
import type { Logger } from "../../core/log.js";
import type { CryptoDevice, ToDeviceMessage } from "./crypto-device.js";
import { sendMachineRequest, type HomeserverCall } from "./outgoing-requests.js";
import type { VerificationBoard } from "./verification-board.js";

/** Sends a room message the machine asked for (encrypted where the room is) and resolves to the homeserver's answer. */
export type RoomSend = (
  roomId: string,
  type: string,
  content: Record<string, unknown>,
  txnId: string,
) => Promise<unknown>;

/** What taking part in verifications needs. */
export interface VerificationsOptions {
  device: CryptoDevice;
  call: HomeserverCall;
  board: VerificationBoard;
  sendToRoom: RoomSend;
  /** Who may verify the bot: the rooms' allowed users and the bot's own account. */
  mayVerify: (userId: string) => boolean;
  /** The people listed in the bindings: their devices are learnt at once, so their requests are recognised. */
  people: readonly string[];
  log: Logger;
  /** How often the operator's answer is looked for while emoji are shown. */
  answerPollMs?: number;
}

interface Flow {
  request: VerificationRequest;
  sas?: Sas;
  shown: boolean;
}

/** In-room verification events (the request is an m.room.message of its own msgtype). */
export function isVerificationEvent(type: string, content: Record<string, unknown>): boolean {
  return (
    type.startsWith("m.key.verification.") ||
    (type === "m.room.message" && content.msgtype === "m.key.verification.request")
  );
}

/**
 * The bot's side of interactive verification (SAS, emoji and decimals), to-device or in
 * a room: it accepts a request from a person it serves, answers their start, and shows
 * the emoji and decimals to the operator through the board; only the operator's answer
 * (`roomgate matrix verify`) confirms or cancels — the bot never decides by itself.
 * Everything it does on the machine is queued after the device's current work.
 */
export class Verifications {
  private readonly flows = new Map<string, Flow>();
  private chain: Promise<unknown> = Promise.resolve();
  private poller: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(private readonly options: VerificationsOptions) {
    options.device.onToDevice((messages) => this.fromToDevice(messages));
    options.device.onRoomRequest((request) => this.later(() => this.sendRoomRequest(request)));
    // A request from a device the machine does not know yet is not recognised: know them all first.
    const people = options.people.map((u) => new UserId(u));
    if (people.length > 0)
      this.later(() => options.device.run((machine) => machine.updateTrackedUsers(people)));
  }

  /** An in-room verification event (decrypted), from a bound room. */
  fromRoom(
    roomId: string,
    event: { event_id: string; sender: string; type: string; content: Record<string, unknown> },
  ): void {
    this.later(async () => {
      await this.options.device.run((machine) =>
        machine.receiveVerificationEvent(JSON.stringify(event), new RoomId(roomId)),
      );
      if (event.type === "m.room.message") await this.requested(event.sender, event.event_id);
    });
  }

  /** Stops answering and polling (the device is given up). */
  stop(): void {
    this.stopped = true;
    if (this.poller) clearInterval(this.poller);
    // Verification objects hold the machine's store open; a store left open cannot be deleted on close.
    for (const flowId of [...this.flows.keys()]) this.forget(flowId);
  }

  private forget(flowId: string): void {
    const flow = this.flows.get(flowId);
    this.flows.delete(flowId);
    flow?.sas?.free();
    flow?.request.free();
  }

  private fromToDevice(messages: ToDeviceMessage[]): void {
    for (const m of messages) {
      const flowId = m.content.transaction_id;
      if (m.type === "m.key.verification.request" && typeof flowId === "string") {
        this.later(() => this.requested(m.sender, flowId));
      }
    }
  }

  /** Runs `task` after the device's current work (listeners fire while the machine is busy). */
  private later(task: () => Promise<unknown>): void {
    this.chain = this.chain
      .then(task)
      .catch((err: unknown) => this.options.log.warn({ err }, "matrix: a verification step failed"));
  }

  private async requested(userId: string, flowId: string): Promise<void> {
    const { device, board, log } = this.options;
    const request = await device.run(async (machine) =>
      machine.getVerificationRequest(new UserId(userId), flowId),
    );
    if (!request) return;
    if (this.flows.has(flowId)) return request.free();
    if (!this.options.mayVerify(userId)) {
      log.info({ userId }, "matrix: a verification request from someone the bot does not serve; cancelled");
      const cancel = request.cancel();
      request.free();
      if (cancel) await this.send(cancel);
      return;
    }
    this.flows.set(flowId, { request, shown: false });
    request.registerChangesCallback(async () => this.later(() => this.progress(flowId)));
    const accept = request.acceptWithMethods([VerificationMethod.SasV1]);
    if (accept) await this.send(accept);
    await board.put({
      flowId,
      userId,
      ...(request.otherDeviceId ? { deviceId: request.otherDeviceId.toString() } : {}),
      ...(request.roomId ? { roomId: request.roomId.toString() } : {}),
      state: "requested",
    });
    log.warn(
      { userId, flowId },
      "matrix: someone asked to verify the bot; run `roomgate matrix verify` to compare the emoji",
    );
  }

  private async progress(flowId: string): Promise<void> {
    const flow = this.flows.get(flowId);
    if (!flow || this.stopped) return;
    const { request } = flow;
    const base = { flowId, userId: request.otherUserId.toString() };
    if (request.phase() === VerificationRequestPhase.Cancelled || request.isCancelled()) {
      this.flows.delete(flowId);
      return this.options.board.put({
        ...base,
        state: "cancelled",
        reason: request.cancelInfo?.reason() ?? "cancelled",
      });
    }
    if (request.phase() === VerificationRequestPhase.Done) {
      this.flows.delete(flowId);
      this.options.log.warn(base, "matrix: verification done");
      return this.options.board.put({ ...base, state: "done" });
    }
    if (!flow.sas) {
      // Each call makes a new object holding the machine's store: keep one, free the rest.
      const started = request.getVerification();
      if (!(started instanceof Sas)) {
        started?.free();
        return;
      }
      flow.sas = started;
      started.registerChangesCallback(async () => this.later(() => this.progress(flowId)));
      const accept = started.weStarted() ? undefined : started.accept();
      if (accept) await this.send(accept);
    }
    const verification = flow.sas;
    if (verification.canBePresented() && !flow.shown) {
      flow.shown = true;
      await this.options.board.put({
        ...base,
        state: "emoji",
        emoji: (verification.emoji() ?? []).map((e) => ({ symbol: e.symbol, description: e.description })),
        decimals: [...(verification.decimals() ?? [])],
      });
      this.pollAnswers();
    }
  }

  /** Looks for the operator's answers while any verification shows its emoji. */
  private pollAnswers(): void {
    if (this.poller) return;
    this.poller = setInterval(() => {
      const waiting = [...this.flows.entries()].filter(
        ([, f]) => f.shown && f.sas && !f.sas.haveWeConfirmed(),
      );
      if (waiting.length === 0 || this.stopped) {
        clearInterval(this.poller);
        this.poller = undefined;
        return;
      }
      for (const [flowId, flow] of waiting) this.later(() => this.answer(flowId, flow));
    }, this.options.answerPollMs ?? 500);
    this.poller.unref();
  }

  private async answer(flowId: string, flow: Flow): Promise<void> {
    const sas = flow.sas;
    if (!sas || sas.haveWeConfirmed() || sas.isCancelled()) return;
    const answer = await this.options.board.takeAnswer(flowId);
    if (!answer) return;
    const userId = flow.request.otherUserId.toString();
    if (answer === "cancel") {
      const cancel = sas.cancelWithCode("m.mismatched_sas");
      if (cancel) await this.send(cancel);
      this.options.log.warn(
        { userId, flowId },
        "matrix: the operator said the emoji do not match; verification cancelled",
      );
      return;
    }
    const requests = await this.options.device.run(() => sas.confirm());
    for (const request of requests) await this.send(request);
    await this.options.board.put({ flowId, userId, state: "confirmed" });
    this.options.log.warn({ userId, flowId }, "matrix: the operator confirmed the emoji");
  }

  private async send(request: ToDeviceRequest | RoomMessageRequest): Promise<void> {
    if (request instanceof ToDeviceRequest) {
      await this.options.device.run((machine) => sendMachineRequest(machine, request, this.options.call));
    } else await this.sendRoomRequest(request);
  }

  private async sendRoomRequest(request: RoomMessageRequest): Promise<void> {
    const content = JSON.parse(request.body) as Record<string, unknown>;
    const answer = await this.options.sendToRoom(
      request.room_id,
      request.event_type,
      content,
      request.txn_id,
    );
    if (request.id) await this.options.device.markSent(request.id, request.type, answer);
  }
}
