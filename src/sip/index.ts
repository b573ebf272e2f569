/** SIP: pure parsing for ingest (parseSip), QoS correlation (SDP) and the decoded-message view. */
export { parseSip } from "./parse.ts";
export { SIP_PARSE_REASONS } from "./types.ts";
export type { SipAddress, SipContact, SipMessage, SipParseOptions, SipParseReason, SipVia } from "./types.ts";
export { findSdpBody, parseSdp, sipBody, sipSdp } from "./sdp.ts";
export type { SdpCodec, SdpConnection, SdpDirection, SdpInfo, SdpMedia, SdpOrigin } from "./sdp.ts";
export { decodeSipMessage } from "./decoded.ts";
export type { DecodedSip, DecodedSipHeader } from "./decoded.ts";
export { sipTableFor } from "./routing.ts";
export type { SipTable } from "./routing.ts";
export { canonicalHeaderName, COMPACT_HEADER_FORMS, expandCompactName } from "./headers.ts";
export { parseUri } from "./uri.ts";
export type { SipUriParts } from "./uri.ts";
