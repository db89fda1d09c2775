/**
 * UTF-16 text measured the way the protocol counts it: surrogate pairs, and UTF-8 byte lengths. A leaf module
 * (no imports), so the state builder and the diagnostics report can both use it without importing each other.
 */

export const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;
export const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;

/** UTF-8 length of `text`; a lone surrogate counts 3 bytes, as its U+FFFD replacement encodes. */
export function utf8Length(text: string): number {
	let bytes = 0;
	for (let i = 0; i < text.length; i++) {
		const code = text.charCodeAt(i);
		if (code < 0x80) bytes += 1;
		else if (code < 0x800) bytes += 2;
		else if (isHighSurrogate(code) && i + 1 < text.length && isLowSurrogate(text.charCodeAt(i + 1))) {
			bytes += 4;
			i++;
		} else bytes += 3;
	}
	return bytes;
}
