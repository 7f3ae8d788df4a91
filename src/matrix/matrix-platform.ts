import type { OutageNoticeOptions } from "../edge/outage-notices.js";
import type { PlatformFactory, PlatformModule, RuntimeDeps } from "../runtime.js";
import { FloodGate } from "../scheduler/flood-gate.js";
import { MatrixE2ee } from "./crypto/matrix-e2ee.js";
import { MatrixReceiver } from "./matrix-receiver.js";
import type { MatrixRetryPolicy } from "./matrix-retry.js";
import { MatrixSender } from "./matrix-sender.js";
import { matrixRecheck } from "../access/recheck.js";

/** Tuning of the Matrix adapter that is not configuration (tests shorten the waits). */
export interface MatrixPlatformOptions {
  /** Long-poll timeout of each sync request. */
  syncTimeoutMs?: number;
  /** Retry policy of sends. */
  retry?: MatrixRetryPolicy;
  /** How often a running turn renews its typing notification. */
  typingRefreshMs?: number;
  /** When people are told that their message could not be queued. */
  notices?: OutageNoticeOptions;
}

/**
 * The queue lane of every Matrix room when the deployment encrypts: served only by the
 * process that owns the bot's device (the only one that can encrypt), from the moment
 * it takes the device until it loses it. Decided from the configuration alone, so every
 * process (receiver, worker, a schedule's fire) puts a room's turns in the same lane.
 */
export const MATRIX_DEVICE_LANE = "matrix-device";

/** Builds a Matrix platform factory with the given tuning. */
export function createMatrixPlatform(options: MatrixPlatformOptions = {}): PlatformFactory {
  return (deps: RuntimeDeps): PlatformModule => {
    const matrix = deps.config.matrix;
    if (!matrix) return {};
    const log = deps.log.child({ platform: "matrix" });
    // One account, one device: the sender encrypts with the device the receiver owns.
    const e2ee = new MatrixE2ee(matrix, log, deps.redis, deps.keys);
    return {
      sender: new MatrixSender({
        config: matrix,
        log,
        retry: options.retry,
        typingRefreshMs: options.typingRefreshMs,
        e2ee,
      }),
      receiver: new MatrixReceiver({
        config: matrix,
        maxFileBytes: deps.config.limits.maxFileBytes,
        edits: deps.config.edits,
        fileTimeoutMs: deps.config.limits.fileTimeoutSeconds * 1000,
        flood: new FloodGate(deps.scheduler, deps.config.limits),
        redis: deps.redis,
        keys: deps.keys,
        inbox: deps.inbox,
        log,
        syncTimeoutMs: options.syncTimeoutMs,
        ...(options.notices ? { notices: options.notices } : {}),
        paired: (binding, sender) => deps.paired.has(binding, sender),
        pairing: deps.pairing,
        e2ee,
      }),
      senderCheck: matrixRecheck(matrix, (binding, sender) => deps.paired.has(binding, sender)),
      ...(e2ee.capable
        ? {
            laneOf: (room: string) => (room.startsWith("matrix:") ? MATRIX_DEVICE_LANE : undefined),
            // "matrix" too: turns queued before encryption was configured still drain.
            lanes: ["matrix", { name: MATRIX_DEVICE_LANE, active: () => e2ee.ownsDevice }],
          }
        : {}),
    };
  };
}

/** The Matrix adapter for `startRuntime`: nothing when the config has no `matrix` section. */
export const matrixPlatform: PlatformFactory = createMatrixPlatform();
