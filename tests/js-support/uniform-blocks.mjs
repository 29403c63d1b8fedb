// Finds large flat blocks in a screenshot that do not belong to the page: a notification or
// another window drawn over the app when it was captured (docs/screenshots/desktop-panel.png
// once had a black box over the Uptime card). Plain RGBA arithmetic; the caller decodes the PNG.
//
// A page has large flat areas of its own (the background, the sidebar, empty cards), all
// close in colour to the picture's most common colour. An overlay stands out from it. So:
// the largest rectangle of one exact colour that is far from the dominant colour, at least
// MIN_BLOCK_SIDE on each side, must stay small. Tuned on every README screenshot (light and dark) and on the bad one (1.9%).

/** RGB distance (0..441) beyond which a colour does not belong to the page's surfaces. */
export const FAR_FROM_DOMINANT = 100;
/** Largest share of the picture such a rectangle may cover. */
export const MAX_FOREIGN_BLOCK = 0.01;
/**
 * Rectangles thinner than this (px) are lines, bars and borders (the popup's countdown bar
 * is 6 px tall), not something drawn over the page; a notification is far thicker.
 */
export const MIN_BLOCK_SIDE = 24;

/** The most common colour of an RGBA buffer, as 0xRRGGBB. */
function dominant(data) {
  const counts = new Map();
  for (let i = 0; i < data.length; i += 4) {
    const c = (data[i] << 16) | (data[i + 1] << 8) | data[i + 2];
    counts.set(c, (counts.get(c) ?? 0) + 1);
  }
  let best = 0;
  let n = -1;
  for (const [c, k] of counts) if (k > n) [best, n] = [c, k];
  return best;
}

const distance = (a, b) => Math.hypot(((a >> 16) & 255) - ((b >> 16) & 255), ((a >> 8) & 255) - ((b >> 8) & 255), (a & 255) - (b & 255));

/**
 * The largest axis-aligned rectangle of one exact colour far from the dominant colour, at
 * least MIN_BLOCK_SIDE px on each side:
 * { x, y, width, height, colour, share } (share of the picture's area), or null.
 */
export function largestForeignBlock({ width, height, data }) {
  const bg = dominant(data);
  const colourAt = (x, y) => {
    const i = (y * width + x) * 4;
    return (data[i] << 16) | (data[i + 1] << 8) | data[i + 2];
  };
  const heights = new Int32Array(width);
  let best = null;
  const far = new Map();
  const isFar = (c) => {
    let v = far.get(c);
    if (v === undefined) far.set(c, (v = distance(c, bg) > FAR_FROM_DOMINANT));
    return v;
  };
  for (let y = 0; y < height; y++) {
    const row = new Int32Array(width);
    for (let x = 0; x < width; x++) {
      row[x] = colourAt(x, y);
      heights[x] = isFar(row[x]) ? (y > 0 && colourAt(x, y - 1) === row[x] ? heights[x] + 1 : 1) : 0;
    }
    // Largest rectangle in the histogram, within runs of one colour.
    let x = 0;
    while (x < width) {
      let end = x;
      while (end < width && row[end] === row[x]) end++;
      if (heights[x] > 0) {
        const stack = [];
        for (let i = x; i <= end; i++) {
          const h = i < end ? heights[i] : 0;
          let start = i;
          while (stack.length && stack.at(-1)[1] >= h) {
            const [s, sh] = stack.pop();
            const area = sh * (i - s);
            const thick = sh >= MIN_BLOCK_SIDE && i - s >= MIN_BLOCK_SIDE;
            if (thick && (!best || area > best.width * best.height)) best = { x: s, y: y - sh + 1, width: i - s, height: sh, colour: row[x] };
            start = s;
          }
          stack.push([start, h]);
        }
      }
      x = end;
    }
  }
  if (best) {
    best.share = (best.width * best.height) / (width * height);
    best.colour = `#${best.colour.toString(16).padStart(6, "0")}`;
  }
  return best;
}
