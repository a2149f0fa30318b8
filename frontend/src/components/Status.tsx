// Loading, error and empty states: every page shows one of these instead of a blank area.
import type { ReactNode } from "react";
import { ApiError } from "../api/client";

export function Loading({ what }: { what: string }) {
  return (
    <p className="state loading" role="status" aria-live="polite">
      Loading {what}…
    </p>
  );
}

export function ErrorBox({ error, retry }: { error: unknown; retry?: () => void }) {
  const message =
    error instanceof ApiError || error instanceof Error ? error.message : "Something went wrong.";
  return (
    <div className="state error" role="alert">
      <strong>Could not load this.</strong> <span>{message}</span>
      {retry && (
        <button type="button" onClick={retry}>
          Retry
        </button>
      )}
    </div>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="state empty">{children}</p>;
}

/** One switch for a query's three states, so no page forgets one. */
export function QueryState<T>({
  query,
  what,
  empty,
  children,
}: {
  query: { data: T | undefined; error: unknown; isPending: boolean; refetch: () => unknown };
  what: string;
  empty?: (data: T) => ReactNode | null;
  children: (data: T) => ReactNode;
}) {
  if (query.isPending) return <Loading what={what} />;
  if (query.error || query.data === undefined)
    return <ErrorBox error={query.error} retry={() => void query.refetch()} />;
  const none = empty?.(query.data);
  if (none) return <Empty>{none}</Empty>;
  return <>{children(query.data)}</>;
}
