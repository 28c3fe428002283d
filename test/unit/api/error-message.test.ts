/** Errors as logs, conditions and Events show them: a Kubernetes Status in one short line, never headers. */
import { ApiException } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import {
  absentIfNotFound,
  apiStatusOf,
  errorMessage,
  formatApiStatus,
} from "../../../src/api/error-message.ts";

const headers = { "audit-id": "6f0c", "content-type": "application/json", authorization: "Bearer s3cr3t" };
const notFound = new ApiException(
  404,
  "Unknown API Status Code!",
  JSON.stringify({
    kind: "Status",
    apiVersion: "v1",
    status: "Failure",
    message: 'clusters.clusters.openmcp.cloud "x" not found',
    reason: "NotFound",
    details: { name: "x", group: "clusters.openmcp.cloud", kind: "clusters" },
    code: 404,
  }),
  headers,
);

describe("errorMessage", () => {
  it("renders a failed API call as its Status, far shorter than client-node's message, without headers", () => {
    expect(notFound.message).toContain("audit-id"); // what used to be logged
    expect(errorMessage(notFound)).toBe('404 NotFound: clusters.clusters.openmcp.cloud "x" not found');
    expect(errorMessage(notFound).length).toBeLessThan(notFound.message.length / 3);
  });

  it("reads a Status given as an object, and says only the code when the body is not a Status", () => {
    const invalid = new ApiException(
      422,
      "",
      {
        kind: "Status",
        reason: "Invalid",
        message: "spec.tenancy: Unsupported value",
        details: { causes: [{}] },
      },
      headers,
    );
    expect(errorMessage(invalid)).toBe("422 Invalid: spec.tenancy: Unsupported value");
    expect(errorMessage(new ApiException(503, "", "<html>upstream down</html>", headers))).toBe("HTTP 503");
    for (const error of [notFound, invalid])
      expect(errorMessage(error)).not.toMatch(/audit-id|Bearer|s3cr3t/);
  });

  it("keeps the message of our own errors, and of anything else", () => {
    expect(errorMessage(new Error("quota exceeded"))).toBe("quota exceeded");
    expect(errorMessage("plain")).toBe("plain");
  });
});

describe("apiStatusOf", () => {
  it("finds the Status of an API call behind our own errors' causes", () => {
    const conflict = new Error("clusters/ns/x changed since resourceVersion 5; re-reading", {
      cause: notFound,
    });
    expect(apiStatusOf(conflict)).toEqual({
      code: 404,
      reason: "NotFound",
      message: 'clusters.clusters.openmcp.cloud "x" not found',
    });
    expect(errorMessage(conflict)).toBe("clusters/ns/x changed since resourceVersion 5; re-reading");
    expect(apiStatusOf(new Error("no API call here"))).toBeUndefined();
  });

  it("formats a Status without a message as its code and reason", () => {
    expect(formatApiStatus({ code: 409, reason: "Conflict" })).toBe("409 Conflict");
  });
});

describe("errorMessage of a failed connection", () => {
  it("names the cause and its system code, never a bare `fetch failed`", () => {
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:39999"), {
      code: "ECONNREFUSED",
      address: "127.0.0.1",
      port: 39999,
    });
    const failed = new TypeError("fetch failed", { cause: refused });
    expect(errorMessage(failed)).toBe("fetch failed: connect ECONNREFUSED 127.0.0.1:39999");
    const tls = Object.assign(new Error("Hostname/IP does not match certificate's altnames"), {
      code: "ERR_TLS_CERT_ALTNAME_INVALID",
    });
    expect(
      errorMessage(
        new Error("Cluster a/b: fetch failed", { cause: new TypeError("fetch failed", { cause: tls }) }),
      ),
    ).toBe(
      "Cluster a/b: fetch failed: Hostname/IP does not match certificate's altnames (ERR_TLS_CERT_ALTNAME_INVALID)",
    );
  });

  it("does not repeat a cause whose words the message already holds", () => {
    const inner = new Error("bad port");
    expect(
      errorMessage(
        new Error("Cluster a/b: fetch failed: bad port", {
          cause: new TypeError("fetch failed", { cause: inner }),
        }),
      ),
    ).toBe("Cluster a/b: fetch failed: bad port");
  });
});

describe("absentIfNotFound", () => {
  it("answers what the call resolves to, undefined for a 404, and throws any other failure", async () => {
    expect(await absentIfNotFound(async () => "found")).toBe("found");
    expect(await absentIfNotFound(() => Promise.reject(notFound))).toBeUndefined();
    const forbidden = new ApiException(403, "", { kind: "Status", reason: "Forbidden", code: 403 }, headers);
    await expect(absentIfNotFound(() => Promise.reject(forbidden))).rejects.toBe(forbidden);
  });
});
