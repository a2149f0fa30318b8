// Export of the rows a table shows, as CSV (RFC 4180 quoting) or JSON, downloaded in the browser.

export type Cell = string | number | boolean | null | undefined;

function csvCell(value: Cell): string {
  if (value === null || value === undefined) return "";
  let text = String(value);
  // a cell starting with = + - @ (after spaces too), tab or CR is a formula to spreadsheets:
  // keep it text (numbers stay numbers)
  if (typeof value === "string" && /^(?:\s*[=+\-@]|[\t\r])/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function toCsv(columns: string[], rows: Cell[][]): string {
  return [columns, ...rows].map((row) => row.map(csvCell).join(",")).join("\r\n") + "\r\n";
}

export function download(filename: string, body: string, type: string): void {
  const url = URL.createObjectURL(new Blob([body], { type }));
  const link = document.createElement("a");
  link.href = url;
  link.download = filename;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
