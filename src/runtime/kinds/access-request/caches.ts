/** The AccessRequest kind's caches: the requests, and the Secrets the engine made for them. */
import type { AccessRequest } from "../../../api/access-request.ts";
import { ACCESS_REQUEST_LABELS } from "../../../api/constants/access-request.ts";
import { resourceCache, secretCache } from "../../informers.ts";

/** The caches the AccessRequest kind declares. */
export const ACCESS_REQUEST_CACHES = {
  accessRequests: resourceCache<AccessRequest>("AccessRequest"),
  /** Only the Secrets the engine made (labelled with their AccessRequest's uid). */
  accessSecrets: secretCache("AccessSecret", ACCESS_REQUEST_LABELS.accessRequestUid),
} as const;
