import { validateNewPlant } from '@app/contracts';
import { validatedBody } from '../http/validated-body.pipe';

/** Validates the body against NewPlant, compiled from the OpenAPI document. */
export const NewPlantPipe = validatedBody(validateNewPlant);
