// Loaded with `node --import` into a roomgate process: the first time its bullmq worker
// has taken a schedule's fire and is about to add the fire that follows (bullmq does
// that in a round trip of its own, after moveToActive), the process kills itself with
// SIGKILL. What it leaves in Redis is exactly what a crash in that window leaves: the
// fire's job active under a lock that runs out, the scheduler still on that fire, no
// next job.
import { writeSync } from "node:fs";
import process from "node:process";
import { JobScheduler } from "bullmq";

const upsert = JobScheduler.prototype.upsertJobScheduler;
JobScheduler.prototype.upsertJobScheduler = function (...args) {
  const options = args[5];
  // The worker's call (override false, produced by the taken job); a Queue's upsert overrides.
  if (options?.override === false && typeof options.producerId === "string") {
    writeSync(2, `dying after taking ${options.producerId}\n`);
    process.kill(process.pid, "SIGKILL");
  }
  return upsert.apply(this, args);
};
