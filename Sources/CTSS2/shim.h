// The TPM Software Stack's ESYS API (tss2-esys), its TCTI loader (tss2-tctildr) and its
// response-code decoder (tss2-rc), for the TPM clock. The small inline helpers below keep the
// C structures (sessions, templates, the TPM2B name) out of Swift: each returns a TSS2_RC.
#include <stdint.h>
#include <string.h>
#include <tss2/tss2_esys.h>
#include <tss2/tss2_rc.h>
#include <tss2/tss2_tctildr.h>

// Opens a TCTI from a configuration string ("device:/dev/tpmrm0",
// "swtpm:host=127.0.0.1,port=2321") and an ESYS context over it. On failure nothing is left
// open and both outputs are NULL.
static inline TSS2_RC otl_tpm_open(const char *conf, ESYS_CONTEXT **esys,
                                   TSS2_TCTI_CONTEXT **tcti) {
  *esys = NULL;
  *tcti = NULL;
  TSS2_RC rc = Tss2_TctiLdr_Initialize(conf, tcti);
  if (rc != TSS2_RC_SUCCESS) {
    *tcti = NULL;
    return rc;
  }
  rc = Esys_Initialize(esys, *tcti, NULL);
  if (rc != TSS2_RC_SUCCESS) {
    *esys = NULL;
    Tss2_TctiLdr_Finalize(tcti);
    *tcti = NULL;
  }
  return rc;
}

// Closes what otl_tpm_open opened (either may be NULL).
static inline void otl_tpm_close(ESYS_CONTEXT **esys, TSS2_TCTI_CONTEXT **tcti) {
  if (*esys != NULL) Esys_Finalize(esys);
  if (*tcti != NULL) Tss2_TctiLdr_Finalize(tcti);
  *esys = NULL;
  *tcti = NULL;
}

// TPM2_ReadClock: Clock (ms), resetCount, restartCount and safe.
static inline TSS2_RC otl_tpm_read_clock(ESYS_CONTEXT *esys, uint64_t *clock, uint32_t *reset,
                                         uint32_t *restart, uint8_t *safe) {
  TPMS_TIME_INFO *info = NULL;
  TSS2_RC rc = Esys_ReadClock(esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &info);
  if (rc != TSS2_RC_SUCCESS) return rc;
  *clock = info->clockInfo.clock;
  *reset = info->clockInfo.resetCount;
  *restart = info->clockInfo.restartCount;
  *safe = info->clockInfo.safe;
  Esys_Free(info);
  return TSS2_RC_SUCCESS;
}

// The name (nameAlg || SHA-256 of the public area) of the ECC P-256 storage primary key that
// the TPM derives from the hierarchy's seed (ESYS_TR_RH_OWNER: the storage primary seed, which
// TPM2_Clear replaces; ESYS_TR_RH_ENDORSEMENT: the endorsement seed), with the usual template
// (restricted decrypt, AES-128-CFB, fixedTPM, fixedParent, no auth value). The key is created
// and flushed; nothing persists. `name` must hold 68 bytes; `length` receives the name's size.
static inline TSS2_RC otl_tpm_primary_name(ESYS_CONTEXT *esys, ESYS_TR hierarchy, uint8_t *name,
                                           size_t *length) {
  TPM2B_SENSITIVE_CREATE sensitive;
  memset(&sensitive, 0, sizeof sensitive);
  TPM2B_PUBLIC template;
  memset(&template, 0, sizeof template);
  template.publicArea.type = TPM2_ALG_ECC;
  template.publicArea.nameAlg = TPM2_ALG_SHA256;
  template.publicArea.objectAttributes =
      TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT | TPMA_OBJECT_FIXEDTPM |
      TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_USERWITHAUTH |
      TPMA_OBJECT_NODA;
  template.publicArea.parameters.eccDetail.symmetric.algorithm = TPM2_ALG_AES;
  template.publicArea.parameters.eccDetail.symmetric.keyBits.aes = 128;
  template.publicArea.parameters.eccDetail.symmetric.mode.aes = TPM2_ALG_CFB;
  template.publicArea.parameters.eccDetail.scheme.scheme = TPM2_ALG_NULL;
  template.publicArea.parameters.eccDetail.curveID = TPM2_ECC_NIST_P256;
  template.publicArea.parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL;
  TPM2B_DATA outside;
  memset(&outside, 0, sizeof outside);
  TPML_PCR_SELECTION pcrs;
  memset(&pcrs, 0, sizeof pcrs);
  ESYS_TR key = ESYS_TR_NONE;
  TSS2_RC rc = Esys_CreatePrimary(esys, hierarchy, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE,
                                  &sensitive, &template, &outside, &pcrs, &key, NULL, NULL,
                                  NULL, NULL);
  if (rc != TSS2_RC_SUCCESS) return rc;
  TPM2B_NAME *keyName = NULL;
  rc = Esys_TR_GetName(esys, key, &keyName);
  if (rc == TSS2_RC_SUCCESS) {
    size_t size = keyName->size <= 68 ? keyName->size : 68;
    memcpy(name, keyName->name, size);
    *length = size;
    Esys_Free(keyName);
  }
  Esys_FlushContext(esys, key);
  return rc;
}

// TPM2_Shutdown(TPM2_SU_CLEAR): the orderly shutdown before a reboot (the test harness and the
// command line's TPM tools use it; the clock never calls it).
static inline TSS2_RC otl_tpm_shutdown_clear(ESYS_CONTEXT *esys) {
  return Esys_Shutdown(esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, TPM2_SU_CLEAR);
}

static inline ESYS_TR otl_tpm_owner_hierarchy(void) { return ESYS_TR_RH_OWNER; }
static inline ESYS_TR otl_tpm_endorsement_hierarchy(void) { return ESYS_TR_RH_ENDORSEMENT; }
