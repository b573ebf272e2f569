/** Live HEP event stream (docs/STREAM.md): capture, broker, filter, WebSocket glue. */
export {
  StreamBroker,
  streamMetrics,
  outboxCounters,
  DROP_REASONS,
  type BrokerConfig,
  type StreamMetrics,
  type StreamSource,
  type StreamSubscription,
} from "./broker.ts";
export { StreamEvent, eventsOf, type StreamFrame, type SipFrame } from "./event.ts";
export { parseStreamFilter, filterQuery, FILTER_PARAMS, SIP_METHODS, type StreamFilter } from "./filter.ts";
export { Outbox, CLOSE, type Outlet, type OutboxCounters, type SendResult } from "./outbox.ts";
export {
  upgradeToStream,
  upgradeToRelay,
  upgradeSocket,
  isUpgrade,
  describeStream,
  socketOutlet,
  closeReason,
  STREAM_ROUTE_DESCRIPTION,
  type SocketHandlers,
  type StreamDescription,
  type JsonPeer,
  type RelaySocket,
} from "./socket.ts";
export { checkStreamConfig, createLiveStream, type LiveStream } from "./live.ts";
export {
  StreamSlots,
  SLOT_REFUSALS,
  EVICTED_REASON,
  type StreamCaller,
  type SlotLimits,
  type SlotRefusal,
  type SlotHolder,
  type SlotCounters,
} from "./slots.ts";
