/** The core's byte helpers, for the testkit's Web Crypto adapters. */
import { Bytes } from "@paydesk/core"

export const { utf8, fromUtf8, toBase64Url, fromBase64Url, toBase64, fromBase64, constantTimeEqual } = Bytes
