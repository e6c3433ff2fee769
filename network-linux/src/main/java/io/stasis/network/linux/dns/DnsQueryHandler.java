package io.stasis.network.linux.dns;

import io.stasis.core.network.EgressAttempt;
import io.stasis.core.network.DomainPattern;
import io.stasis.core.network.EgressDecision;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.network.linux.EgressGate;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns one query from a sandbox into the answer its egress policy allows. Knows nothing of
 * sockets: bytes and the sender's address in, bytes out.
 *
 * <p>Beside the policy: PTR gets NXDOMAIN without asking the policy (reverse lookups are routine
 * noise, from ssh, sudo, and a fast negative answer saves their timeouts); ANY and zone transfers
 * get REFUSED (a sandbox has no use for them and ANY is an amplifier); AAAA gets an empty answer
 * for any allowed name (IPv6 is off in sandboxes; empty makes clients use IPv4 at once), and so do
 * SVCB and HTTPS, whose address hints would bypass the A answers the gate records.
 */
final class DnsQueryHandler {
    private static final Logger log = LoggerFactory.getLogger(DnsQueryHandler.class);
    static final long STATIC_TTL_SECONDS = 60;
    /** The UDP payload every client accepts (RFC 1035 section 4.2.1); a larger answer of ours is sent truncated. */
    private static final int UDP_LIMIT = 512;
    private static final int DNS_PORT = 53;

    private final EgressGate gate;
    private final StaticRecords statics;
    private final UpstreamForwarder forwarder;

    DnsQueryHandler(EgressGate gate, StaticRecords statics, UpstreamForwarder forwarder) {
        this.gate = gate;
        this.statics = statics;
        this.forwarder = forwarder;
    }

    /** The bytes to send back, or empty when there is nothing to answer (no header, or not a query). */
    Optional<byte[]> answer(byte[] query, InetAddress source, Transport transport) {
        DnsHeader header;
        try {
            header = DnsHeader.peek(query);
        } catch (DnsFormatException e) {
            log.atDebug().addKeyValue("source", source.getHostAddress()).addKeyValue("bytes", query.length).log("dropped a datagram too short for a header");
            return Optional.empty();
        }
        if (header.response()) return Optional.empty(); // answering an answer could start a loop between resolvers

        DnsMessage message = null;
        String malformed = null;
        try {
            message = DnsMessage.decode(query);
        } catch (DnsFormatException e) {
            malformed = e.getMessage();
        }
        Optional<SandboxId> sandbox = gate.sandboxAt(source);
        if (sandbox.isEmpty()) {
            log.atDebug().addKeyValue("source", source.getHostAddress()).log("refused a query from an address no sandbox owns");
            return Optional.of(message == null ? DnsMessage.reply(header, Rcode.REFUSED).encode() : DnsMessage.reply(message, Rcode.REFUSED, List.of()).encode());
        }
        if (message == null) {
            log.atDebug().addKeyValue("sandbox", sandbox.get()).addKeyValue("error", malformed).log("malformed query");
            return Optional.of(DnsMessage.reply(header, Rcode.FORMERR).encode());
        }
        return Optional.of(judge(sandbox.get(), message, query, transport));
    }

    /** The answer for a well-formed query from a known sandbox: the policy first, then static records or upstream. */
    private byte[] judge(SandboxId sandbox, DnsMessage query, byte[] raw, Transport transport) {
        if (query.header().opcode() != DnsHeader.OPCODE_QUERY) return reply(sandbox, query, Rcode.NOTIMP, "opcode");
        if (query.questions().size() != 1) return reply(sandbox, query, Rcode.FORMERR, "question count");
        DnsQuestion question = query.questions().getFirst();
        String name = DomainPattern.normalize(question.name());
        if (question.dnsClass() != DnsType.CLASS_IN || name.isEmpty()) return reply(sandbox, query, Rcode.REFUSED, "class or root");
        switch (question.type()) {
            case DnsType.PTR -> {
                return reply(sandbox, query, Rcode.NXDOMAIN, "reverse lookup");
            }
            case DnsType.ANY, DnsType.AXFR, DnsType.IXFR -> {
                return reply(sandbox, query, Rcode.REFUSED, "query type");
            }
            default -> {
            }
        }
        EgressDecision decision = gate.domain(sandbox, name);
        if (!decision.allowed()) return deny(sandbox, query, name, decision);
        gate.allowed(sandbox, new EgressAttempt(Optional.of(name), Optional.empty(), DNS_PORT, "dns", decision.rule()));
        switch (question.type()) {
            case DnsType.AAAA, DnsType.SVCB, DnsType.HTTPS -> {
                return reply(sandbox, query, Rcode.NOERROR, "ipv4 only");
            }
            default -> {
            }
        }
        Optional<List<Inet4Address>> fixed = statics.lookup(name);
        if (fixed.isPresent()) return answerStatic(sandbox, query, name, fixed.get(), transport);
        return forward(sandbox, query, raw, name, transport);
    }

    private byte[] answerStatic(SandboxId sandbox, DnsMessage query, String name, List<Inet4Address> addresses, Transport transport) {
        if (query.questions().getFirst().type() != DnsType.A || addresses.isEmpty()) return reply(sandbox, query, Rcode.NOERROR, "static");
        String asked = query.questions().getFirst().name();
        List<DnsRecord> answers = addresses.stream().map(a -> DnsRecord.a(asked, STATIC_TTL_SECONDS, a)).toList();
        gate.resolved(sandbox, name, List.copyOf(addresses), Duration.ofSeconds(STATIC_TTL_SECONDS));
        DnsMessage reply = DnsMessage.reply(query, Rcode.NOERROR, answers);
        byte[] bytes = reply.encode();
        if (transport == Transport.UDP && bytes.length > UDP_LIMIT)
            bytes = new DnsMessage(reply.header().withTruncated(true), reply.questions(), List.of(), List.of(), List.of()).encode();
        logAnswer(sandbox, query, Rcode.NOERROR, "static");
        return bytes;
    }

    private byte[] forward(SandboxId sandbox, DnsMessage query, byte[] raw, String name, Transport transport) {
        Optional<UpstreamForwarder.Forwarded> forwarded = forwarder.forward(raw, query.questions().getFirst(), transport);
        if (forwarded.isEmpty()) return reply(sandbox, query, Rcode.SERVFAIL, "no upstream answered");
        DnsMessage answer = forwarded.get().message();
        UpstreamAnswer meaning = UpstreamAnswer.of(answer, name);
        for (String target : meaning.aliasTargets()) {
            EgressDecision decision = gate.domain(sandbox, target);
            if (!decision.allowed()) return deny(sandbox, query, target, decision);
        }
        if (!meaning.addresses().isEmpty()) gate.resolved(sandbox, name, meaning.addresses(), meaning.ttl());
        logAnswer(sandbox, query, answer.header().rcode(), "upstream " + forwarded.get().server());
        return DnsHeader.withId(forwarded.get().bytes(), query.header().id());
    }

    /** NXDOMAIN, as if the name did not exist: for {@code name}, the asked one or an alias target on its way. */
    private byte[] deny(SandboxId sandbox, DnsMessage query, String name, EgressDecision decision) {
        gate.denied(sandbox, new EgressAttempt(Optional.of(name), Optional.empty(), DNS_PORT, "dns", decision.rule()));
        return reply(sandbox, query, Rcode.NXDOMAIN, decision.rule());
    }

    private byte[] reply(SandboxId sandbox, DnsMessage query, int rcode, String why) {
        logAnswer(sandbox, query, rcode, why);
        return DnsMessage.reply(query, rcode, List.of()).encode();
    }

    private static void logAnswer(SandboxId sandbox, DnsMessage query, int rcode, String why) {
        var event = log.atDebug().addKeyValue("sandbox", sandbox).addKeyValue("rcode", Rcode.name(rcode)).addKeyValue("why", why);
        if (query.questions().size() == 1)
            event = event.addKeyValue("name", query.questions().getFirst().name()).addKeyValue("type", query.questions().getFirst().type());
        event.log("answered");
    }
}
