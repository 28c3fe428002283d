/** The key of an object in caches, work queues and maps: `namespace/name`, or `name` for a cluster-scoped object. */
export function objectKey(object: {
  readonly metadata?: { readonly namespace?: string; readonly name?: string };
}): string {
  const { namespace, name } = object.metadata ?? {};
  return namespace ? `${namespace}/${name}` : (name ?? "");
}

/** The same key from a reference (`{ namespace, name }`), e.g. a `clusterRef`. */
export function referenceKey(reference: { readonly namespace?: string; readonly name?: string }): string {
  return objectKey({ metadata: reference });
}
