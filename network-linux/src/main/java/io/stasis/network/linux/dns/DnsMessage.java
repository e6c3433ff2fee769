package io.stasis.network.linux.dns;

import java.util.ArrayList;
import java.util.List;

/** A DNS message (RFC 1035 section 4): header, question, answer, authority and additional sections. */
public record DnsMessage(DnsHeader header, List<DnsQuestion> questions, List<DnsRecord> answers,
                         List<DnsRecord> authorities, List<DnsRecord> additionals) {

    public DnsMessage {
        questions = List.copyOf(questions);
        answers = List.copyOf(answers);
        authorities = List.copyOf(authorities);
        additionals = List.copyOf(additionals);
        for (List<?> section : List.of(questions, answers, authorities, additionals))
            if (section.size() > 0xffff) throw new IllegalArgumentException("a section of " + section.size() + " entries exceeds 65535");
    }

    public static DnsMessage query(int id, DnsQuestion question) {
        return new DnsMessage(DnsHeader.query(id), List.of(question), List.of(), List.of(), List.of());
    }

    /** The answer to {@code query}: its id, opcode, RD bit and questions, with {@code rcode} and {@code answers}. */
    public static DnsMessage reply(DnsMessage query, int rcode, List<DnsRecord> answers) {
        return new DnsMessage(query.header.reply(rcode), query.questions, answers, List.of(), List.of());
    }

    /** An answer without questions, for a query too broken to read them from. */
    public static DnsMessage reply(DnsHeader query, int rcode) {
        return new DnsMessage(query.reply(rcode), List.of(), List.of(), List.of(), List.of());
    }

    /**
     * Reads a message. Bytes after the last section are ignored, as some senders pad.
     *
     * @throws DnsFormatException whatever the bytes are, the only exception this throws
     */
    public static DnsMessage decode(byte[] bytes) throws DnsFormatException {
        DnsHeader header = DnsHeader.peek(bytes);
        var in = new DnsReader(bytes);
        in.bytes(4);
        int questionCount = in.u16();
        int answerCount = in.u16();
        int authorityCount = in.u16();
        int additionalCount = in.u16();
        var questions = new ArrayList<DnsQuestion>();
        for (int i = 0; i < questionCount; i++) questions.add(in.question());
        return new DnsMessage(header, questions, records(in, answerCount), records(in, authorityCount), records(in, additionalCount));
    }

    public byte[] encode() {
        var out = new DnsWriter();
        out.u16(header.id());
        out.u16(header.flags());
        for (List<?> section : List.of(questions, answers, authorities, additionals)) out.u16(section.size());
        for (DnsQuestion q : questions) {
            out.name(q.name());
            out.u16(q.type());
            out.u16(q.dnsClass());
        }
        for (List<DnsRecord> section : List.of(answers, authorities, additionals))
            for (DnsRecord r : section) write(out, r);
        return out.toByteArray();
    }

    private static List<DnsRecord> records(DnsReader in, int count) throws DnsFormatException {
        var records = new ArrayList<DnsRecord>();
        for (int i = 0; i < count; i++) records.add(in.record());
        return records;
    }

    private static void write(DnsWriter out, DnsRecord r) {
        out.name(r.name());
        out.u16(r.type());
        out.u16(r.dnsClass());
        out.u32(r.ttl());
        int lengthAt = out.position();
        out.u16(0);
        switch (r.data()) {
            case DnsRecord.A a -> out.bytes(a.address().getAddress());
            case DnsRecord.Cname c -> out.name(c.target());
            case DnsRecord.Opaque o -> out.bytes(o.bytes());
        }
        out.u16At(lengthAt, out.position() - lengthAt - 2);
    }
}
