/**
 * HEP3 identifiers, named after "HEP3 Network Protocol Specification" rev. 37 (2025-06-25).
 * Numbers are written in hex exactly as the spec tables list them so a reader can check each one.
 */

/** Chunk vendor ids ("Vendor chunk types"). Only GENERIC (0x0000) chunks are interpreted. */
export const HEP_VENDOR = {
  GENERIC: 0x0000,
  FREESWITCH: 0x0001,
  KAMAILIO: 0x0002,
  OPENSIPS: 0x0003,
  ASTERISK: 0x0004,
  HOMER: 0x0005,
  SIPXECS: 0x0006,
  YETI: 0x0007,
  GENESYS: 0x0008,
} as const;

/**
 * Generic chunk type ids (vendor 0x0000, "Generic chunk types"). The comment gives the payload type
 * of the spec table; multi-octet integers are network byte order.
 */
export const HEP_CHUNK = {
  /** uint8: address family, 2 = AF_INET, 10 = AF_INET6 (the spec example sends 2 for IPv4). */
  IP_FAMILY: 0x0001,
  /** uint8: IP protocol number (17 UDP, 6 TCP, 132 SCTP). */
  IP_PROTO: 0x0002,
  /** inet4-addr */
  IPV4_SRC: 0x0003,
  /** inet4-addr */
  IPV4_DST: 0x0004,
  /** inet6-addr */
  IPV6_SRC: 0x0005,
  /** inet6-addr */
  IPV6_DST: 0x0006,
  /** uint16 */
  SRC_PORT: 0x0007,
  /** uint16 */
  DST_PORT: 0x0008,
  /** uint32: seconds since 1970-01-01 (epoch). */
  TS_SEC: 0x0009,
  /** uint32: microseconds, added to TS_SEC. */
  TS_USEC: 0x000a,
  /** uint8: captured protocol, see HEP_PROTO. */
  PROTO_TYPE: 0x000b,
  /** uint32: numeric capture agent id (202, 1201, 2033...). */
  CAPTURE_ID: 0x000c,
  /** uint16: keep-alive timer, seconds. */
  KEEP_ALIVE: 0x000d,
  /** octet-string: authentication key (plain text / TLS connection). */
  AUTH_KEY: 0x000e,
  /** octet-string: captured packet payload. */
  PAYLOAD: 0x000f,
  /** octet-string: captured payload, compressed (gzip / deflate). */
  COMPRESSED_PAYLOAD: 0x0010,
  /** octet-string: internal correlation id. */
  CORRELATION_ID: 0x0011,
  /** uint16 */
  VLAN: 0x0012,
  /** octet-string: capture agent name ("node1", "node2"...). */
  NODE_NAME: 0x0013,
  /** uint64: source MAC (the 48-bit address in the low six octets). */
  SRC_MAC: 0x0014,
  /** uint64: destination MAC. */
  DST_MAC: 0x0015,
  /** uint16: Ethernet type. */
  ETH_TYPE: 0x0016,
  /** uint8: TCP flags (SYN, PUSH...). */
  TCP_FLAGS: 0x0017,
  /** uint8: IP TOS. */
  IP_TOS: 0x0018,
  // 0x0019..0x001f: reserved by the spec.
  /** uint16: MOS value (HOMER agents send MOS × 100). */
  MOS: 0x0020,
  /** uint16: R-factor (HOMER agents send R × 100). */
  R_FACTOR: 0x0021,
  /** octet-string: GEO location. */
  GEO: 0x0022,
  /** uint32: jitter. */
  JITTER: 0x0023,
  /** octet-string: transaction type ("call", "registration"). */
  TRANSACTION_TYPE: 0x0024,
  /** octet-string: payload JSON keys. */
  PAYLOAD_JSON_KEYS: 0x0025,
  /** octet-string: tags' values. */
  TAGS: 0x0026,
  /** uint16: type of tag. */
  TAG_TYPE: 0x0027,
  /** uint16: event type, see HEP_EVENT. */
  EVENT_TYPE: 0x0028,
  /** octet-string: group id. */
  GROUP_ID: 0x0029,
} as const;

export type HepChunkName = keyof typeof HEP_CHUNK;

/** Values of HEP_CHUNK.IP_FAMILY: the BSD socket address families the agents copy from sa_family. */
export const HEP_AF = { INET: 2, INET6: 10 } as const;

/** Capture protocol types carried in chunk 0x000b ("Capture protocol types"). */
export const HEP_PROTO = {
  RESERVED: 0x00,
  SIP: 0x01,
  XMPP: 0x02,
  SDP: 0x03,
  RTP: 0x04,
  /** RTCP as JSON. */
  RTCP: 0x05,
  MGCP: 0x06,
  /** MEGACO (H.248). */
  MEGACO: 0x07,
  /** M2UA (SS7/SIGTRAN). */
  M2UA: 0x08,
  /** M3UA (SS7/SIGTRAN). */
  M3UA: 0x09,
  IAX: 0x0a,
  /** Written "H3222" in the spec. */
  H3222: 0x0b,
  H321: 0x0c,
  M2PA: 0x0d,
  /** MOS full report [JSON]: the RTP agent / RTCP-XR style quality report. */
  MOS_FULL_REPORT: 0x22,
  /** MOS short report [JSON]; the spec asks to use the MOS chunk 0x0020 instead. */
  MOS_SHORT_REPORT: 0x23,
  SIP_JSON: 0x32,
  DNS_JSON: 0x35,
  /** M3UA JSON (ISUP). */
  M3UA_JSON: 0x36,
  RTSP_JSON: 0x37,
  DIAMETER_JSON: 0x38,
  GSM_MAP_JSON: 0x39,
  RTCP_PION: 0x3a,
  /** CDR, for a call or a registration transaction. */
  CDR: 0x3c,
  /** Verto (JSON event/signalling protocol). */
  VERTO: 0x3d,
  /**
   * Log lines. Not in the rev. 37 table, but HOMER agents and Kamailio's sipcapture use 100 for logs
   * (sipcapture routes proto_t 100 to its logs table), so receivers must know it.
   */
  LOG: 0x64,
} as const;

/** Event types carried in chunk 0x0028 ("Event chunk types"). */
export const HEP_EVENT = {
  RESERVED: 0x000,
  RECORDING: 0x001,
  RECORDING_LI: 0x002,
} as const;

const PROTO_NAMES: ReadonlyMap<number, string> = new Map(
  Object.entries(HEP_PROTO).map(([name, id]) => [id, name.toLowerCase()] as const),
);

/** Lower-case name of a capture protocol type ("sip", "rtcp", "log"), or "proto_<n>" when unassigned. */
export function hepProtoName(protoType: number): string {
  return PROTO_NAMES.get(protoType) ?? `proto_${protoType}`;
}
