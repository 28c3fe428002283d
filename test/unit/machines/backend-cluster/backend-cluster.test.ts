/** What every kind holding a cluster at the backend shares: the backend's endpoint read as host and port. */
import { describe, expect, it } from "vitest";
import { apiEndpointOf } from "../../../../src/machines/backend-cluster/backend-cluster.ts";

describe("apiEndpointOf", () => {
  it.each([
    ["https://127.0.0.1:6443", { host: "127.0.0.1", port: 6443 }],
    ["https://api.example.com", { host: "api.example.com", port: 443 }],
    ["https://[::1]:8443", { host: "::1", port: 8443 }],
    ["not a url", undefined],
    [undefined, undefined],
  ])("%s → %o", (url, endpoint) => {
    expect(apiEndpointOf(url)).toEqual(endpoint);
  });
});
