package io.stasis.sdk;

/**
 * One dispatched Server-Sent Event.
 *
 * @param event the {@code event:} field, {@code "message"} when the event had none
 * @param data  the {@code data:} lines joined with {@code \n}
 * @param id    the last event id seen so far on the stream, or null
 */
record SseEvent(String event, String data, String id) {
}
