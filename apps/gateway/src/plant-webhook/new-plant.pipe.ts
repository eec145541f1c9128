import { Injectable, PipeTransform } from '@nestjs/common';
import { NewPlant, validateNewPlant } from '@app/contracts';
import { ProblemException } from '@app/observability';

/** Validates the body against NewPlant, compiled from the OpenAPI document; 422 names each bad field. */
@Injectable()
export class NewPlantPipe implements PipeTransform<unknown, NewPlant> {
  transform(body: unknown): NewPlant {
    const result = validateNewPlant(body);
    if (result.ok) return result.value;
    throw ProblemException.of(
      'validation',
      result.errors.map((e) => `${e.field} ${e.message}`).join('; '),
      { errors: result.errors },
    );
  }
}
