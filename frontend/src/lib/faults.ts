// Who was at fault when a match failed, worded as `arena tournament` words it: one place, so
// the match page, the match lists and the tournament's warning agree.
import type { Schemas } from "../api/client";

export type FaultComponent = Schemas["FaultComponent"];
export type ModelAtFault = Schemas["ModelAtFault"];

const COMPONENT: Record<FaultComponent, string> = {
  model_endpoint: "a model's endpoint",
  sandbox: "the sandbox",
  worker: "the worker",
  infrastructure: "infrastructure",
};

/** What each component being at fault means: never the models' answers, never scored. */
export const FAULT_HELP: Record<FaultComponent, string> = {
  model_endpoint: "its endpoint refused the configuration or stayed down past the retries",
  sandbox: "the Docker engine, an image, or a CI run stopped from outside",
  worker: "the worker running the step died on its last attempt",
  infrastructure: "the service itself (store, queue, or an unexpected error)",
};

/** "model m1's endpoint", or the component; null for a match whose fault was not recorded. */
export function faultLabel(fault: FaultComponent | null, model: string | null): string | null {
  if (fault === null) return null;
  if (fault === "model_endpoint" && model) return `model ${model}'s endpoint`;
  return COMPONENT[fault];
}

/** The tournament's loud line for a model, as `arena tournament` prints it. */
export const modelAtFaultLine = (m: ModelAtFault): string =>
  `model ${m.model}'s endpoint is at fault in ${m.matches} match(es)`;
