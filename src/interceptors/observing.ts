import { type Interceptor, interceptor } from "../hub/call-pipeline.js";

/** One handled request, for metrics and logs. */
export interface RequestSample {
  method: string;
  server?: string;
  tool?: string;
  outcome: "ok" | "error" | "tool_error";
  seconds: number;
}

/** An interceptor that gives `observer` one {@link RequestSample} per request handled. */
export function observing(observer: (sample: RequestSample) => void): Interceptor {
  // It reads `isError` alone, which a RawJson result answers right.
  return interceptor({ needs: "raw" }, (next) => async (request) => {
    const started = performance.now();
    let outcome: RequestSample["outcome"] = "error";
    try {
      const result = await next(request);
      outcome = result.isError === true ? "tool_error" : "ok";
      return result;
    } finally {
      const sample: RequestSample = {
        method: request.method,
        outcome,
        seconds: (performance.now() - started) / 1000,
      };
      const target = request.target;
      if (target?.kind === "tool" && target.tool !== undefined && request.method === "tools/call") {
        sample.server = target.tool.server;
        sample.tool = target.tool.name;
      }
      observer(sample);
    }
  });
}
