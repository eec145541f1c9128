// A baseline of bench:gateway: the framework's own floor. A plain Nest app on Fastify with one controller
// guarded by Passport's bearer strategy (as the gateway's is), returning at once: no validation, no Kafka.
// Run in its own process (forked by gateway.ts); reports its port to the parent.
import 'reflect-metadata';
import { Body, Controller, HttpCode, Injectable, Module, Post, UseGuards } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AuthGuard, PassportModule, PassportStrategy } from '@nestjs/passport';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { AddressInfo } from 'node:net';
import { Strategy } from 'passport-http-bearer';

@Injectable()
class BearerStrategy extends PassportStrategy(Strategy, 'bench-bearer') {
  validate(token: string) {
    return token === process.env.TOKEN ? { name: 'bench' } : false;
  }
}

@Controller('plant')
class WebhookController {
  @Post('webhook')
  @HttpCode(200)
  @UseGuards(AuthGuard('bench-bearer'))
  accept(@Body() body: { id: number }) {
    return { eventId: String(body.id) };
  }
}

@Module({ imports: [PassportModule], controllers: [WebhookController], providers: [BearerStrategy] })
class BenchModule {}

async function main() {
  const app = await NestFactory.create<NestFastifyApplication>(BenchModule, new FastifyAdapter(), { logger: false });
  await app.listen(0, '127.0.0.1');
  process.send!((app.getHttpServer().address() as AddressInfo).port);
}

void main();
