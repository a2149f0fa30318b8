// A unified diff rendered from diff2html's parse, as React text nodes (never its HTML output).
import { parse } from "diff2html/lib-esm/diff-parser";
import { useMemo } from "react";
import { stripAnsi } from "../lib/text";

const LINE_CLASS: Record<string, string> = { insert: "add", delete: "del", context: "ctx" };

export function DiffView({ diff, label }: { diff: string | null | undefined; label: string }) {
  const files = useMemo(() => (diff ? parse(diff) : []), [diff]);
  if (!diff) return <p className="state empty">No {label}.</p>;
  if (files.length === 0) return <pre className="raw">{stripAnsi(diff)}</pre>;
  return (
    <div className="diff" aria-label={label}>
      {files.map((file, i) => (
        <section key={i} className="diff-file">
          <h5>
            {file.isNew ? "new " : file.isDeleted ? "deleted " : ""}
            {stripAnsi(file.newName === "/dev/null" ? file.oldName : file.newName)}{" "}
            <span className="added">+{file.addedLines}</span> <span className="deleted">−{file.deletedLines}</span>
          </h5>
          <table>
            <tbody>
              {file.blocks.map((block, j) => [
                <tr key={`h${j}`} className="hunk">
                  <td colSpan={3}>{block.header}</td>
                </tr>,
                ...block.lines.map((line, k) => (
                  <tr key={`${j}-${k}`} className={LINE_CLASS[line.type] ?? "ctx"}>
                    <td className="ln">{line.oldNumber ?? ""}</td>
                    <td className="ln">{line.newNumber ?? ""}</td>
                    <td className="code">{stripAnsi(line.content)}</td>
                  </tr>
                )),
              ])}
            </tbody>
          </table>
        </section>
      ))}
    </div>
  );
}
