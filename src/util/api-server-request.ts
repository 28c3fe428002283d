/**
 * One raw HTTPS request to the API server a KubeConfig names, for what the generated clients lack (a subresource
 * POST, a plain-text `/metrics`): the KubeConfig's own TLS and credentials, a timeout, and the answer's status and
 * text for the caller to judge.
 */
import { request } from "node:https";
import type { KubeConfig } from "@kubernetes/client-node";

/** What to send: a method, a path below the server, headers, an optional body, how long to wait. */
export interface ApiServerRequest {
  readonly method: "GET" | "POST";
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
  readonly timeoutMs: number;
}

/** What the API server answered: its status code (500 when it gave none) and its body as text. */
export interface ApiServerAnswer {
  readonly status: number;
  readonly text: string;
}

/** Sends `call` to the current cluster of `kubeConfig`; rejects only when no answer came (network, timeout). */
export async function requestApiServer(
  kubeConfig: KubeConfig,
  call: ApiServerRequest,
): Promise<ApiServerAnswer> {
  const server = kubeConfig.getCurrentCluster()?.server ?? "";
  const options: Parameters<typeof request>[1] & { headers: Record<string, string> } = {
    method: call.method,
    headers: { ...call.headers },
    timeout: call.timeoutMs,
  };
  await kubeConfig.applyToHTTPSOptions(options);
  return new Promise((resolve, reject) => {
    const req = request(new URL(call.path, server), options, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () =>
        resolve({ status: response.statusCode ?? 500, text: Buffer.concat(chunks).toString("utf8") }),
      );
    });
    req.on("error", reject);
    req.on("timeout", () => req.destroy(new Error(`${call.method} ${call.path} timed out`)));
    req.end(call.body);
  });
}

/** GETs `path` as plain text (e.g. `/metrics`); an answer other than 2xx is an error naming the path and status. */
export async function getApiServerText(kubeConfig: KubeConfig, path: string): Promise<string> {
  const answer = await requestApiServer(kubeConfig, {
    method: "GET",
    path,
    headers: { Accept: "text/plain" },
    timeoutMs: 10_000,
  });
  if (answer.status >= 300)
    throw new Error(`GET ${path} answered ${answer.status}: ${answer.text.slice(0, 200)}`);
  return answer.text;
}
