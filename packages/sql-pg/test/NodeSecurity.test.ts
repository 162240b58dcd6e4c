import { EntropyContract, PasswordHasherContract, SecretCipherContract } from "@paydesk/testkit/contracts"
import { layerAesGcmSecretCipher, layerCryptoEntropy, layerScryptPasswordHasher, parseKey } from "../src/NodeSecurity.js"

const key = parseKey("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")
const otherKey = parseKey(Buffer.alloc(32, 7).toString("base64"))

// A cheaper N keeps the suite fast; the production default is checked by its parameters' use in `hash`.
PasswordHasherContract.suite("scrypt", layerScryptPasswordHasher({ N: 1024, r: 8, p: 1, keyLength: 32 }))
SecretCipherContract.suite("aes-256-gcm", layerAesGcmSecretCipher(key), { foreign: layerAesGcmSecretCipher(otherKey) })
EntropyContract.suite("node crypto", layerCryptoEntropy)
