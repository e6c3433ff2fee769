package io.stasis.cli;

import io.stasis.sdk.Event;
import io.stasis.sdk.Page;
import io.stasis.sdk.StasisJson;
import io.stasis.sdk.Subscription;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/**
 * {@code stasis events [ID]}: the event log as lines {@code id time type summary}, oldest first;
 * {@code --follow} goes on with the live event stream, which resumes by itself after a dropped
 * connection.
 */
@Command(name = "events", mixinStandardHelpOptions = true,
        description = {"Print the event log (state changes, checkpoints, forks, errors), oldest first.",
                "One line per event: ID TIME TYPE SUMMARY. With --follow, goes on printing new events as they "
                        + "happen until interrupted (with --json: one JSON object per line). Live events show TIME as -: "
                        + "the stream does not carry it."})
final class EventsCommand implements Callable<Integer> {
    @ParentCommand
    StasisCommand root;

    @Parameters(index = "0", arity = "0..1", paramLabel = "ID", description = "Only this sandbox's events (id or name).")
    String id;

    @Option(names = "--after", paramLabel = "N", description = "Only events after the one with this id.")
    Long after;

    @Option(names = {"-f", "--follow"}, description = "Keep printing new events as they happen.")
    boolean follow;

    @Override
    public Integer call() {
        if (after != null && after < 0) throw new UsageException("--after must be an event id (0 or more), was " + after);
        PrintStream out = root.io().out();
        List<Event> past = new ArrayList<>();
        fetchAfter(after).all().forEach(past::add);
        if (!follow) {
            if (root.json()) {
                out.println(StasisJson.writeList(past));
            } else {
                past.forEach(e -> out.println(line(e)));
            }
            return ExitCodes.OK;
        }
        Consumer<Event> print = e -> {
            out.println(root.json() ? StasisJson.writeLine(e) : line(e));
            out.flush();
        };
        // The log so far from its pages, which carry each event's time; then the live stream.
        past.forEach(print);
        long last = past.isEmpty() ? (after == null ? 0 : after) : past.getLast().id();
        var client = root.client();
        try (Subscription events = id == null ? client.streamEvents(last, print)
                : client.sandboxes().streamEvents(id, last, print)) {
            events.await(null);
            return ExitCodes.OK;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return ExitCodes.OK;
        }
    }

    private Page<Event> fetchAfter(Long eventId) {
        var client = root.client();
        if (id == null) return eventId == null ? client.events() : client.eventsAfter(eventId);
        return eventId == null ? client.sandboxes().events(id) : client.sandboxes().eventsAfter(id, eventId);
    }

    /** {@code 12 2026-11-29T10:00:00Z lifecycle sbx_1 running -> paused (api)}. */
    static String line(Event e) {
        return e.id() + " " + (e.at() == null ? "-" : HumanFormat.time(e.at())) + " " + e.type() + " " + summary(e);
    }

    static String summary(Event e) {
        String sandbox = e.sandboxId() == null ? "-" : e.sandboxId();
        return switch (e.type()) {
            case "lifecycle" -> sandbox + " " + e.string("from") + " -> " + e.string("to")
                    + (e.string("reason") == null ? "" : " (" + e.string("reason") + ")");
            case "checkpoint" -> sandbox + " " + e.string("checkpointId") + " "
                    + (Boolean.TRUE.equals(e.data().get("memory"))
                    ? "memory " + HumanFormat.size(bytes(e.data().get("sizeBytes")))
                    : "files");
            case "fork" -> sandbox + " " + e.string("checkpointId") + " -> " + children(e.data().get("children"));
            case "error" -> sandbox + " " + e.string("step") + ": " + e.string("message");
            case "network.denied" -> sandbox + " " + (e.string("domain") == null ? "" : e.string("domain") + " ")
                    + (e.string("address") == null ? "port " : e.string("address") + ":") + e.string("port")
                    + " " + e.string("protocol") + " (" + e.string("rule") + ")";
            default -> sandbox + " " + StasisJson.writeLine(others(e.data()));
        };
    }

    private static Long bytes(Object value) {
        return value instanceof Number n ? n.longValue() : null;
    }

    private static String children(Object value) {
        if (value instanceof List<?> list) return list.stream().map(String::valueOf).collect(Collectors.joining(" "));
        return String.valueOf(value);
    }

    /** An unknown type's data without the sandbox, which the line already shows. */
    private static Map<String, Object> others(Map<String, Object> data) {
        var rest = new LinkedHashMap<>(data);
        rest.remove("sandboxId");
        return rest;
    }
}
