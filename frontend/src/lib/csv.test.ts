import { describe, expect, it } from "vitest";
import { toCsv } from "./csv";

describe("toCsv", () => {
  it("quotes commas, quotes and newlines; blanks for missing values", () => {
    expect(toCsv(["a", "b"], [["x,y", 'say "hi"'], [null, 1.5], ["two\nlines", true]])).toBe(
      'a,b\r\n"x,y","say ""hi"""\r\n,1.5\r\n"two\nlines",true\r\n',
    );
  });
  it("keeps a model name that looks like a formula as text", () => {
    expect(toCsv(["model"], [["=HYPERLINK(1)"], ["-x"], [-3]])).toBe("model\r\n'=HYPERLINK(1)\r\n'-x\r\n-3\r\n");
    expect(toCsv(["id"], [[" =1+2"], ["\tx"]])).toBe("id\r\n' =1+2\r\n'\tx\r\n");
  });
});
