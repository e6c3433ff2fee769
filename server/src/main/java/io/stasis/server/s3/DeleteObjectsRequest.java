package io.stasis.server.s3;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import javax.xml.XMLConstants;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.parsers.ParserConfigurationException;
import org.w3c.dom.Element;
import org.xml.sax.SAXException;
import org.xml.sax.helpers.DefaultHandler;

/**
 * The body of a DeleteObjects request: {@code <Delete><Quiet>true</Quiet><Object><Key>k</Key>...}.
 * Parsed with DTDs and external entities off: the body is the caller's.
 */
record DeleteObjectsRequest(List<String> keys, boolean quiet) {
    static final int MAX_KEYS = 1000;

    static DeleteObjectsRequest parse(byte[] body) {
        Element root;
        try {
            var factory = DocumentBuilderFactory.newInstance();
            factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
            factory.setFeature(XMLConstants.FEATURE_SECURE_PROCESSING, true);
            factory.setXIncludeAware(false);
            factory.setExpandEntityReferences(false);
            factory.setNamespaceAware(true);
            var builder = factory.newDocumentBuilder();
            builder.setErrorHandler(new DefaultHandler()); // throws on fatal errors instead of printing them
            root = builder.parse(new ByteArrayInputStream(body)).getDocumentElement();
        } catch (ParserConfigurationException | SAXException | IOException e) {
            throw malformed("the body is not well-formed XML: " + e.getMessage());
        }
        if (!"Delete".equals(root.getLocalName())) throw malformed("the body's root element must be Delete");
        var keys = new ArrayList<String>();
        boolean quiet = false;
        for (var node = root.getFirstChild(); node != null; node = node.getNextSibling()) {
            if (!(node instanceof Element element)) continue;
            switch (element.getLocalName()) {
                case "Quiet" -> quiet = Boolean.parseBoolean(element.getTextContent().strip());
                case "Object" -> keys.add(keyOf(element));
                default -> throw malformed("unexpected element " + element.getLocalName() + " in Delete");
            }
        }
        if (keys.isEmpty()) throw malformed("Delete lists no Object");
        if (keys.size() > MAX_KEYS) throw malformed("Delete lists " + keys.size() + " objects; at most " + MAX_KEYS);
        return new DeleteObjectsRequest(List.copyOf(keys), quiet);
    }

    private static String keyOf(Element object) {
        for (var node = object.getFirstChild(); node != null; node = node.getNextSibling())
            if (node instanceof Element e && "Key".equals(e.getLocalName())) return e.getTextContent();
        throw malformed("an Object has no Key");
    }

    private static S3Error malformed(String message) {
        return new S3Error(400, "MalformedXML", message);
    }
}
