// Issue texts are untrusted markdown: rendered without raw HTML, links limited to web schemes.
import ReactMarkdown from "react-markdown";
import { safeUrl, stripAnsi } from "../lib/text";

export function Markdown({ text }: { text: string }) {
  return (
    <div className="markdown">
      <ReactMarkdown
        skipHtml
        urlTransform={safeUrl}
        components={{
          a: ({ href, children }) =>
            href ? (
              <a href={href} rel="noopener noreferrer nofollow" target="_blank">
                {children}
              </a>
            ) : (
              <span>{children}</span>
            ),
          img: ({ alt }) => <span className="img-alt">[image: {alt}]</span>,
        }}
      >
        {stripAnsi(text)}
      </ReactMarkdown>
    </div>
  );
}
