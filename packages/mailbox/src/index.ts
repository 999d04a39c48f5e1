export type { MailboxOptions, MailboxSettings } from './config.js'
export { MailboxConfig } from './config.js'
export type { DigestPolicy, Envelope, EnvelopeKind, Mail, MailPage, Receipt, Sender } from './envelope.js'
export type { MailboxErrorCode } from './errors.js'
export { MailboxError, MailboxErrorCodes } from './errors.js'
export { createMailbox } from './mailbox.js'
export { MailboxToken, mailboxPlugin } from './plugin.js'
export type { MailStore, MemoryStore, StoreSnapshot } from './store.js'
export { createMemoryStore } from './store.js'
export type {
  Mailbox,
  MailSource,
  PageOptions,
  ReadOptions,
  SessionOptions,
  SourceCounters,
  SourceMail,
  SourceOpenOptions,
  WaitOptions,
  WaitResult,
  WakeOn,
} from './types.js'
