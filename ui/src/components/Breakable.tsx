import { Fragment } from "preact";
import { breakParts } from "../format";

/** Long names, paths and tool names: may wrap after `_ . - / :` (see `.breakable` for the rest). */
export function Breakable({ text }: { text: string }) {
  return (
    <>
      {breakParts(text).map((part, i) => (
        <Fragment key={i}>
          {part}
          <wbr />
        </Fragment>
      ))}
    </>
  );
}
