// How numbers and times read on every page: one place, so columns agree.

export const num = (v: number | null | undefined, digits = 0): string =>
  v === null || v === undefined || Number.isNaN(v) ? "–" : v.toFixed(digits);

export const pct = (v: number | null | undefined): string =>
  v === null || v === undefined ? "–" : `${(v * 100).toFixed(0)}%`;

export const usd = (v: number | null | undefined): string =>
  v === null || v === undefined ? "–" : v < 0.01 && v > 0 ? `$${v.toFixed(4)}` : `$${v.toFixed(2)}`;

export const secs = (v: number | null | undefined): string =>
  v === null || v === undefined ? "–" : `${v.toFixed(1)} s`;

export const when = (iso: string | null | undefined): string =>
  iso ? new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" }) : "–";

/** A rate with the count it is a share of, e.g. "75% of 8"; without a single chance it is
 * "no chances", never 0% (a model that failed every chance it had). */
export const rate = (v: number | null, of: number): string => (v === null ? "no chances" : `${pct(v)} of ${of}`);
