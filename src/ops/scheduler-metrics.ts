// The scheduler's metrics are part of the one metric set in metrics.ts; this keeps its imports short.
export { deadLettersTotal, deferralsTotal, rateLimitedTotal, resentUnknownPartsTotal } from "./metrics.js";
