/**
 * The suppression list (extension, not in Nylas): addresses this application does not send to. Hard bounces and
 * complaints add them; the application adds and removes them here. Application configuration, so HTTP only: an
 * agent refused by the list is told in the 400 how a person removes an address, and does not lift it itself.
 */
import { DeletedSchema, pageOf } from '../schemas/common.js';
import {
  AddSuppressionInputSchema,
  DeliveryReportSchema,
  ListDeliveryReportsInputSchema,
  ListSuppressionsInputSchema,
  SuppressionRefInputSchema,
  SuppressionSchema,
} from '../schemas/suppressions.js';
import { defineOperation } from './define-operation.js';

export const listSuppressions = defineOperation({
  name: 'list_suppressions',
  title: 'List suppressed addresses',
  description:
    'Lists the addresses this application does not send to (hard bounces, complaints, manual additions), newest first (limit up to 200, then page_token = next_cursor). ' +
    'email filters to one address.',
  input: ListSuppressionsInputSchema,
  output: pageOf(SuppressionSchema),
  hints: { readOnly: true },
  http: { method: 'GET', path: '/suppressions', envelope: 'list' },
  tool: false,
  run: (core, input, { principal }) => core.deliverability.suppressions.list(principal, input),
});

export const addSuppression = defineOperation({
  name: 'add_suppression',
  title: 'Suppress an address',
  description:
    'Adds an address to the suppression list (reason manual): sends to it are refused with a 400 until it is removed. An address already listed keeps its entry.',
  input: AddSuppressionInputSchema,
  output: SuppressionSchema,
  hints: { readOnly: false, idempotent: true },
  http: { method: 'POST', path: '/suppressions' },
  tool: false,
  run: (core, input, { principal }) => core.deliverability.suppressions.add(principal, input),
});

export const removeSuppression = defineOperation({
  name: 'remove_suppression',
  title: 'Remove a suppressed address',
  description:
    "Removes an address from the suppression list, so sends to it are accepted again. 404 when the address is not on this application's list.",
  input: SuppressionRefInputSchema,
  output: DeletedSchema,
  hints: { readOnly: false, destructive: true },
  http: { method: 'DELETE', path: '/suppressions/:email', envelope: 'empty' },
  tool: false,
  run: async (core, input, { principal }) => core.deliverability.suppressions.remove(principal, input.email),
});

export const listDeliveryReports = defineOperation({
  name: 'list_delivery_reports',
  title: 'List bounces and complaints',
  description:
    "Extension: the bounces and complaints recorded against this application's sends, newest first (kind narrows to bounce or complaint; limit up to 200, then page_token = next_cursor). " +
    'Hard bounces and complaints also put the address on the suppression list (list_suppressions).',
  input: ListDeliveryReportsInputSchema,
  output: pageOf(DeliveryReportSchema),
  hints: { readOnly: true },
  http: { method: 'GET', path: '/delivery-reports', envelope: 'list' },
  tool: false,
  run: (core, input, { principal }) => core.deliverability.suppressions.reports(principal, input),
});
