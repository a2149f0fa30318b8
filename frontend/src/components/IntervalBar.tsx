// A rating's 95% interval drawn as a bar with the point estimate, on a scale shared by the table.

export type Scale = { min: number; max: number };

export function IntervalBar({
  low,
  high,
  value,
  scale,
}: {
  low: number | null | undefined;
  high: number | null | undefined;
  value: number | null | undefined;
  scale: Scale;
}) {
  if (value === null || value === undefined) return null;
  const span = scale.max - scale.min || 1;
  const x = (v: number) => Math.min(100, Math.max(0, ((v - scale.min) / span) * 100));
  const lo = low ?? value;
  const hi = high ?? value;
  return (
    <svg className="interval" viewBox="0 0 100 10" preserveAspectRatio="none" aria-hidden="true">
      <rect x={x(lo)} y={3} width={Math.max(0.5, x(hi) - x(lo))} height={4} rx={1} />
      <line x1={x(value)} x2={x(value)} y1={0} y2={10} />
    </svg>
  );
}

export function scaleOf(values: (number | null | undefined)[]): Scale {
  const known = values.filter((v): v is number => typeof v === "number" && Number.isFinite(v));
  if (known.length === 0) return { min: 0, max: 1 };
  const min = Math.min(...known);
  const max = Math.max(...known);
  const pad = (max - min) * 0.05 || 10;
  return { min: min - pad, max: max + pad };
}
