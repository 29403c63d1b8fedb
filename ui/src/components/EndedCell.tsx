import { ago, fullTime } from "../format";

/** When an ended session or a gone provider ended, and why: the history tables' last column.
 * A gateway killed before it could record the end leaves `at` absent. */
export function EndedCell({ at, reason, now }: { at?: string; reason?: string; now: number }) {
  return (
    <td class="small">
      {at ? (
        <span class="nowrap" title={fullTime(at)}>
          {ago(at, now)}
        </span>
      ) : (
        <span>not recorded (the gateway stopped first)</span>
      )}
      {reason && <div class="breakable">{reason}</div>}
    </td>
  );
}
