import { createHash } from 'node:crypto';
import type { AddressObject, ParsedMail } from 'mailparser';

export interface EmailAttachment {
  filename: string | null;
  content_type: string;
  size: number;
  sha256: string;
  /** The content as base64 up to the attachment limit; null above it (listed, not kept). */
  content_base64: string | null;
}

/** The `email` trigger's payload, without `recipient` (set per delivered address). */
export interface EmailMessage {
  from: string | null;
  to: string[];
  cc: string[];
  subject: string;
  text: string | null;
  html: string | null;
  message_id: string | null;
  in_reply_to: string | null;
  references: string[];
  attachments: EmailAttachment[];
}

export function attachmentOf(filename: string | null, contentType: string, content: Buffer, maxBytes: number): EmailAttachment {
  return {
    filename,
    content_type: contentType,
    size: content.length,
    sha256: createHash('sha256').update(content).digest('hex'),
    content_base64: content.length <= maxBytes ? content.toString('base64') : null,
  };
}

function addresses(value: AddressObject | AddressObject[] | undefined): string[] {
  const objects = value === undefined ? [] : Array.isArray(value) ? value : [value];
  const out: string[] = [];
  const walk = (list: AddressObject['value']) => {
    for (const entry of list) {
      if (entry.address) out.push(entry.address);
      if (entry.group) walk(entry.group);
    }
  };
  for (const object of objects) walk(object.value);
  return out;
}

/** A message parsed by mailparser from raw MIME (Mailgun's `body-mime`). */
export function messageFromMime(parsed: ParsedMail, attachmentMaxBytes: number): EmailMessage {
  return {
    from: addresses(parsed.from)[0] ?? null,
    to: addresses(parsed.to),
    cc: addresses(parsed.cc),
    subject: parsed.subject ?? '',
    text: parsed.text ?? null,
    html: typeof parsed.html === 'string' ? parsed.html : null,
    message_id: parsed.messageId ?? null,
    in_reply_to: parsed.inReplyTo ?? null,
    references: parsed.references === undefined ? [] : Array.isArray(parsed.references) ? parsed.references : [parsed.references],
    attachments: parsed.attachments.map((a) =>
      attachmentOf(a.filename ?? null, a.contentType || 'application/octet-stream', a.content, attachmentMaxBytes),
    ),
  };
}

/** Message ids in a References or In-Reply-To header: `<a@b> <c@d>`. */
export function messageIds(header: string | undefined): string[] {
  return header ? (header.match(/<[^<>\s]+>/g) ?? []) : [];
}

/** Lower-case address of `Name <addr>` or `addr`. */
export function bareAddress(value: string): string {
  const angle = /<([^<>]+)>\s*$/.exec(value);
  return (angle ? angle[1]! : value).trim().toLowerCase();
}
