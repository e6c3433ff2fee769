package io.stasis.server.s3;

import io.javalin.http.Context;
import io.stasis.core.error.StasisException;
import io.stasis.core.files.FileInfo;
import io.stasis.core.files.FileType;
import io.stasis.core.files.SandboxPath;
import io.stasis.core.spi.SandboxFiles;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/** ListObjectsV2 of a volume: its regular files as keys, with prefixes, delimiters and continuation. */
final class S3Listing {
    private final SandboxFiles files;

    S3Listing(SandboxFiles files) {
        this.files = files;
    }

    void list(Context ctx, S3Request r) {
        String prefix = ctx.queryParamAsClass("prefix", String.class).getOrDefault("");
        String delimiter = ctx.queryParamAsClass("delimiter", String.class).getOrDefault("");
        int maxKeys = Math.clamp(ctx.queryParamAsClass("max-keys", Integer.class).getOrDefault(1000), 0, 1000);
        String token = ctx.queryParam("continuation-token");
        String startAfter = ctx.queryParamAsClass("start-after", String.class).getOrDefault("");
        if (token != null) startAfter = new String(Base64.getUrlDecoder().decode(token), StandardCharsets.UTF_8);
        var all = new TreeMap<String, FileInfo>();
        walk(r.root(), "", prefix, all);
        var contents = new ArrayList<Map.Entry<String, FileInfo>>();
        var prefixes = new TreeSet<String>();
        String last = null;
        boolean truncated = false;
        for (var e : all.tailMap(startAfter, false).entrySet()) {
            String key = e.getKey();
            if (!key.startsWith(prefix)) continue;
            String group = null;
            if (!delimiter.isEmpty()) {
                int at = key.indexOf(delimiter, prefix.length());
                if (at >= 0) group = key.substring(0, at + delimiter.length());
            }
            if (group != null && prefixes.contains(group)) continue;
            if (contents.size() + prefixes.size() >= maxKeys) {
                truncated = true;
                break;
            }
            if (group != null) {
                prefixes.add(group);
                last = group + "\uffff"; // continue after every key in the group
            } else {
                contents.add(e);
                last = key;
            }
        }
        var xml = new StringBuilder("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">");
        S3Xml.tag(xml, "Name", ctx.pathParam("bucket"));
        S3Xml.tag(xml, "Prefix", prefix);
        if (!delimiter.isEmpty()) S3Xml.tag(xml, "Delimiter", delimiter);
        S3Xml.tag(xml, "MaxKeys", Integer.toString(maxKeys));
        S3Xml.tag(xml, "KeyCount", Integer.toString(contents.size() + prefixes.size()));
        S3Xml.tag(xml, "IsTruncated", Boolean.toString(truncated));
        if (token != null) S3Xml.tag(xml, "ContinuationToken", token);
        if (truncated && last != null)
            S3Xml.tag(xml, "NextContinuationToken", Base64.getUrlEncoder().withoutPadding().encodeToString(last.getBytes(StandardCharsets.UTF_8)));
        for (var e : contents) {
            xml.append("<Contents>");
            S3Xml.tag(xml, "Key", e.getKey());
            S3Xml.tag(xml, "LastModified", S3Xml.ISO.format(e.getValue().mtime()));
            S3Xml.tag(xml, "Size", Long.toString(e.getValue().size()));
            S3Xml.tag(xml, "StorageClass", "STANDARD");
            xml.append("</Contents>");
        }
        for (String p : prefixes) {
            xml.append("<CommonPrefixes>");
            S3Xml.tag(xml, "Prefix", p);
            xml.append("</CommonPrefixes>");
        }
        xml.append("</ListBucketResult>");
        ctx.status(200).contentType("application/xml").result(xml.toString());
    }

    /** Every regular file below {@code dir} whose key could start with {@code prefix}; symlinks are not objects. */
    private void walk(Path root, String dir, String prefix, Map<String, FileInfo> out) {
        List<FileInfo> entries;
        try {
            entries = files.list(root, new SandboxPath("/" + dir));
        } catch (StasisException e) {
            return; // gone meanwhile, or not a directory
        }
        for (var entry : entries) {
            String key = dir + entry.name();
            if (entry.type() == FileType.FILE) {
                if (key.startsWith(prefix)) out.put(key, entry);
            } else if (entry.type() == FileType.DIRECTORY) {
                String sub = key + "/";
                if (sub.startsWith(prefix) || prefix.startsWith(sub)) walk(root, sub, prefix, out);
            }
        }
    }
}
